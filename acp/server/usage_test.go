// Tests of the turn's token usage in the prompt response (unstable,
// rfd:end-turn-token-usage).

package server_test

import (
	"context"
	"iter"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
)

// countingModel answers every call with one word and the usage of a
// caching, reasoning model.
type countingModel struct{}

func (countingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range []llm.Event{
			{Kind: llm.EventText, Text: "ok"},
			{Kind: llm.EventUsage, Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 50, TotalTokens: 1050, CachedInputTokens: 800, ReasoningTokens: 30}},
			{Kind: llm.EventFinish, Finish: llm.FinishStop},
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func TestThePromptResponseCarriesTheTurnsTokenUsage(t *testing.T) {
	h := newHarness(t, hopts{model: countingModel{}})
	sid := h.newSession()
	resp, err := h.client.Prompt(h.ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if u == nil {
		t.Fatal("no usage in the prompt response")
	}
	if u.InputTokens != 1000 || u.OutputTokens != 50 || u.TotalTokens != 1050 {
		t.Errorf("usage %+v", u)
	}
	if u.CachedReadTokens == nil || *u.CachedReadTokens != 800 || u.ThoughtTokens == nil || *u.ThoughtTokens != 30 || u.CachedWriteTokens != nil {
		t.Errorf("optional counts: cached read %v, thought %v, cached write %v", u.CachedReadTokens, u.ThoughtTokens, u.CachedWriteTokens)
	}
}

func TestTheTurnsUsageCountsItsCompactionToo(t *testing.T) {
	script := `{"rules": [
  {"system": "replaced by a summary", "text": "SUMMARY", "usage": {"input": 7, "output": 3}},
  {"text": "You said: {{user}} and here is a long answer that fills the window quickly", "usage": {"input": 30, "output": 20}}
]}`
	h := compactingHarnessWith(t, script)
	sid := h.newSession()
	first, err := h.client.Prompt(h.ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if u := first.Usage; u == nil || u.InputTokens != 30 || u.OutputTokens != 20 || u.TotalTokens != 50 {
		t.Fatalf("first turn's usage %+v, want 30 in, 20 out", u)
	}
	second, err := h.client.Prompt(h.ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hello again")}})
	if err != nil {
		t.Fatal(err)
	}
	if u := second.Usage; u == nil || u.InputTokens != 37 || u.OutputTokens != 23 || u.TotalTokens != 60 {
		t.Fatalf("second turn's usage %+v, want the answer's and the summary's (37 in, 23 out)", u)
	}
}
