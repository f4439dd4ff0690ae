// End-to-end tests of session/fork, the thinking option and the turn's
// usage through a real dshd on a fake DeepSeek server: the model's
// requests show which history and which thinking setting each session
// sent.

package main

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// chatLog answers every chat request with "ok" and a fixed usage, and
// keeps each request.
type chatLog struct {
	mu   sync.Mutex
	reqs []*openaitest.ChatRequest
}

func (l *chatLog) handle(r *openaitest.Request) openaitest.Reply {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Chat)
	l.mu.Unlock()
	return openaitest.Reply{Text: []string{"ok"}, Usage: &openaitest.Usage{PromptTokens: 120, CompletionTokens: 8, CacheHit: 100, ReasoningTokens: 5}}
}

type configOption struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Category     string          `json:"category"`
	CurrentValue json.RawMessage `json:"currentValue"`
}

// users returns the user texts of a request.
func users(c *openaitest.ChatRequest) []string {
	var out []string
	for _, m := range c.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// endingWith returns the last request whose last user text is last.
func (l *chatLog) endingWith(last string) *openaitest.ChatRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.reqs) - 1; i >= 0; i-- {
		if u := users(l.reqs[i]); len(u) > 0 && u[len(u)-1] == last {
			return l.reqs[i]
		}
	}
	return nil
}

func TestAForkedSessionAndItsSourceEachSendTheirOwnHistoryAndThinking(t *testing.T) {
	srv := fakeModel(t)
	log := &chatLog{}
	srv.Handle(log.handle)
	ctx := testkit.Context(t)
	p := start(t, opts{}, "serve", "--backend", "deepseek", "--model-url", srv.URL(), "--model", "deepseek-flash", "--api-key-env", "", "--state-dir", t.TempDir())
	c := stdioWire(p)
	c.initialize(ctx, map[string]any{"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}})
	cwd := t.TempDir()
	var created struct {
		SessionID     string         `json:"sessionId"`
		ConfigOptions []configOption `json:"configOptions"`
	}
	c.call(ctx, "session/new", newParams(cwd), &created)
	src := created.SessionID
	i := slices.IndexFunc(created.ConfigOptions, func(o configOption) bool { return o.ID == "thinking" })
	if i < 0 || created.ConfigOptions[i].Type != "boolean" || created.ConfigOptions[i].Category != "thought_level" || string(created.ConfigOptions[i].CurrentValue) != "true" {
		t.Fatalf("config options %+v, want a boolean thinking option, on", created.ConfigOptions)
	}

	var res struct {
		StopReason string `json:"stopReason"`
		Usage      struct {
			TotalTokens      int `json:"totalTokens"`
			InputTokens      int `json:"inputTokens"`
			OutputTokens     int `json:"outputTokens"`
			ThoughtTokens    int `json:"thoughtTokens"`
			CachedReadTokens int `json:"cachedReadTokens"`
		} `json:"usage"`
	}
	c.call(ctx, "session/prompt", promptParams(src, "the shared start"), &res)
	if u := res.Usage; res.StopReason != "end_turn" || u.InputTokens != 120 || u.OutputTokens != 8 || u.TotalTokens != 128 || u.CachedReadTokens != 100 || u.ThoughtTokens != 5 {
		t.Fatalf("prompt response %+v, want the model's usage", res)
	}

	var forked struct {
		SessionID string `json:"sessionId"`
	}
	c.call(ctx, "session/fork", map[string]any{"sessionId": src, "cwd": cwd}, &forked)
	fork := forked.SessionID
	if fork == "" || fork == src {
		t.Fatalf("session/fork returned %q", fork)
	}
	var set json.RawMessage
	c.call(ctx, "session/set_config_option", map[string]any{"sessionId": fork, "configId": "thinking", "type": "boolean", "value": false}, &set)
	if got := c.prompt(ctx, fork, "only the fork"); got != "end_turn" {
		t.Fatalf("the fork's turn: %s", got)
	}
	if got := c.prompt(ctx, src, "only the source"); got != "end_turn" {
		t.Fatalf("the source's turn: %s", got)
	}

	for _, tc := range []struct {
		last     string
		users    []string
		thinking string
	}{
		{"only the fork", []string{"the shared start", "only the fork"}, "disabled"},
		{"only the source", []string{"the shared start", "only the source"}, "enabled"},
	} {
		r := log.endingWith(tc.last)
		if r == nil {
			t.Fatalf("no model request for %q", tc.last)
		}
		if got := users(r); !slices.Equal(got, tc.users) {
			t.Errorf("the request for %q carries the user messages %q, want %q", tc.last, got, tc.users)
		}
		if r.Thinking == nil || r.Thinking.Type != tc.thinking {
			t.Errorf("the request for %q has thinking %+v, want %s", tc.last, r.Thinking, tc.thinking)
		}
	}
	if code := p.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}
