package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
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
	if _, err := a.Compact(t.Context(), "", nil); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("compacting nothing: %v", err)
	}
	for range 2 {
		if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, func(agent.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Compact(t.Context(), "the file names", nil); err != nil {
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

func TestInput_ATurnsOwnModelAndToolsApplyToThatTurnOnly(t *testing.T) {
	var seen []*llm.Request
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		seen = append(seen, req)
		return text("ok"), nil
	}}
	reg := tools.NewRegistry(nil)
	for _, name := range []string{"grep", "read_file", "run_command"} {
		if _, err := reg.Register(&echoTool{name: name}); err != nil {
			t.Fatal(err)
		}
	}
	a := agent.New(agent.Options{ID: t.Name(), Model: m, ModelID: "main", Tools: reg})
	defer a.Close()
	a.Prompt(t.Context(), agent.Input{Text: "cmd", Model: "other", Tools: []string{"grep"}}, func(agent.Event) {})
	a.Prompt(t.Context(), agent.Input{Text: "plain"}, func(agent.Event) {})
	names := func(r *llm.Request) (out []string) {
		for _, tl := range r.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if seen[0].Model != "other" || strings.Join(names(seen[0]), ",") != "grep" {
		t.Fatalf("the command's turn asked %q with %v", seen[0].Model, names(seen[0]))
	}
	if seen[1].Model != "main" || len(seen[1].Tools) != 3 {
		t.Fatalf("the next turn asked %q with %v", seen[1].Model, names(seen[1]))
	}
}
