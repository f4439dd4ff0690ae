package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
)

func TestCompact_ReplacesTheWholeConversationWithTheSummaryNow(t *testing.T) {
	var asked string
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if strings.Contains(req.System, "summarising") {
			asked = req.System
			return text("SUMMARY"), nil
		}
		return text("answer"), nil
	}}
	var reset []llm.Message
	a := agent.New(agent.Options{ID: t.Name(), Model: m, OnReset: func(msgs []llm.Message) { reset = msgs }})
	defer a.Close()
	if _, err := a.Compact(t.Context(), ""); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("compacting nothing: %v", err)
	}
	for range 2 {
		if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, func(agent.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Compact(t.Context(), "the file names"); err != nil {
		t.Fatal(err)
	}
	msgs := a.History().Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Content, "SUMMARY") || len(reset) != 1 {
		t.Fatalf("history after compaction = %v (reset %v)", msgs, reset)
	}
	if !strings.Contains(asked, "The user asked that the summary keep: the file names") {
		t.Fatalf("the focus did not reach the summariser: %q", asked)
	}
}
