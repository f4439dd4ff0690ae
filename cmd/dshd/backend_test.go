// End-to-end tests of backend presets behind a custom URL: an explicit
// --backend keeps its key variable, thinking setting and reasoning
// passback; without one a URL is a generic OpenAI-compatible server.

package main

import (
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// toolLoop scripts a turn with one tool call between two model calls, so
// the second request shows what is passed back of the first answer.
func toolLoop(srv *openaitest.Server) {
	srv.Enqueue(
		openaitest.Reply{Reasoning: []string{"Look first."}, ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		openaitest.Reply{Reasoning: []string{"Seen."}, Text: []string{"Empty."}},
	)
}

func TestAnExplicitDeepSeekBackendKeepsItsBehaviourBehindAnyURL(t *testing.T) {
	srv := fakeModel(t)
	srv.ValidateDeepSeek(true)
	srv.RequireAPIKey("sk-proxy")
	toolLoop(srv)
	code, stdout, stderr := runDshd(t, []string{"DEEPSEEK_API_KEY=sk-proxy"},
		"prompt", "--backend", "deepseek", "--model-url", srv.URL(), "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "what is here?")
	if code != 0 || stdout != "Empty.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	reqs := srv.Requests()
	var chats []*openaitest.Request
	for _, r := range reqs {
		if r.Chat != nil {
			chats = append(chats, r)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("%d chat requests, want 2", len(chats))
	}
	for i, r := range chats {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-proxy" {
			t.Errorf("request %d: Authorization %q, want the key from DEEPSEEK_API_KEY", i, got)
		}
		if r.Chat.Thinking == nil || r.Chat.Thinking.Type != "enabled" {
			t.Errorf("request %d: thinking %+v, want DeepSeek's thinking object, enabled", i, r.Chat.Thinking)
		}
		if r.Chat.Model != "deepseek-flash" {
			t.Errorf("request %d: model %q, want DeepSeek's default", i, r.Chat.Model)
		}
	}
	var passed *string
	for _, m := range chats[1].Chat.Messages {
		if m.Role == "assistant" {
			passed = m.ReasoningContent
		}
	}
	if passed == nil || *passed != "Look first." {
		t.Fatalf("the second request passes back reasoning %v, want %q", passed, "Look first.")
	}
}

func TestAnExplicitDeepSeekBackendWithThinkingOffSaysSoBehindAnyURL(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("ok"))
	code, _, stderr := runDshd(t, []string{"DEEPSEEK_API_KEY=k"},
		"prompt", "--backend", "deepseek", "--thinking", "off", "--model-url", srv.URL(), "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if r := srv.ChatRequests(); len(r) != 1 || r[0].Thinking == nil || r[0].Thinking.Type != "disabled" {
		t.Fatalf("requests %+v, want one with thinking disabled", r)
	}
}

func TestWithoutABackendAModelURLIsAGenericServer(t *testing.T) {
	srv := fakeModel(t)
	toolLoop(srv)
	code, _, stderr := runDshd(t, []string{"DEEPSEEK_API_KEY=not-for-this-server"},
		"prompt", "--model-url", srv.URL(), "--model", "local", "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for i, r := range srv.Requests() {
		if r.Chat == nil {
			continue
		}
		if r.Chat.Thinking != nil {
			t.Errorf("request %d sends DeepSeek's thinking object to a server nobody said is DeepSeek", i)
		}
		if got := r.Header.Get("Authorization"); got != "" {
			t.Errorf("request %d sends DEEPSEEK_API_KEY (%q) to a server nobody said is DeepSeek", i, got)
		}
	}
}
