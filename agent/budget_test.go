package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
)

// spendingTool charges its call's meter what a delegated child would have
// spent, as the subagent tool does through the run it starts.
type spendingTool struct{ spend llm.Usage }

func (s *spendingTool) Name() string                 { return "delegate" }
func (s *spendingTool) Description() string          { return "delegate" }
func (s *spendingTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s *spendingTool) Kind() tools.Kind             { return tools.KindOther }
func (s *spendingTool) Execute(_ context.Context, call *tools.Call) (*tools.Result, error) {
	child := call.Meter.Child(budget.Limits{})
	child.Charge(s.spend)
	return &tools.Result{Output: "done"}, nil
}

// loopModel asks for the delegate tool at every call, reporting usage.
func loopModel(usage llm.Usage) *funcModel {
	return &funcModel{reply: func(context.Context, *llm.Request) ([]llm.Event, error) {
		u := usage
		return []llm.Event{
			{Kind: llm.EventText, Text: "working"},
			{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: "c", Name: "delegate", Arguments: `{}`}},
			{Kind: llm.EventUsage, Usage: &u},
			{Kind: llm.EventFinish, Finish: llm.FinishToolCalls},
		}, nil
	}}
}

func TestBudget_ATurnsUsageAndItsBoundIncludeWhatItsToolCallsDelegated(t *testing.T) {
	own := llm.Usage{InputTokens: 8, OutputTokens: 2, TotalTokens: 10}
	m := loopModel(own)
	a := agent.New(agent.Options{
		ID: t.Name(), Model: m,
		Tools:      toolSet{"delegate": &spendingTool{spend: llm.Usage{InputTokens: 25, OutputTokens: 5, TotalTokens: 30}}},
		TurnLimits: budget.Limits{Tokens: 100},
	})
	defer a.Close()
	var rec recorder
	res, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	// Each round trip spends 10 of its own and 30 delegated: after 3 the
	// turn has spent 120 ≥ 100, and the 4th call is never made.
	if res.StopReason != agent.StopMaxTokens || res.Exhausted == nil || res.Exhausted.Limit != 100 || res.Exhausted.Used != 120 {
		t.Fatalf("result %+v (exhausted %+v), want max_tokens at the turn's bound of 100 with 120 used", res, res.Exhausted)
	}
	if n := m.calls.Load(); n != 3 {
		t.Fatalf("model called %d times, want 3", n)
	}
	want := llm.Usage{InputTokens: 99, OutputTokens: 21, TotalTokens: 120}
	if res.Usage != want {
		t.Fatalf("turn usage %+v, want %+v (its calls and what they delegated)", res.Usage, want)
	}
	if a.Usage() != want {
		t.Fatalf("agent usage %+v, want %+v", a.Usage(), want)
	}
	// Each usage event carries the turn's running total: one after each
	// model call, and one after each response's tool calls, which
	// delegated 30 tokens (that event has no call of its own).
	var turns, calls []int64
	for _, e := range rec.events() {
		if u, ok := e.(agent.UsageUpdated); ok {
			turns, calls = append(turns, u.Turn.TotalTokens), append(calls, u.Call.TotalTokens)
		}
	}
	if fmt.Sprint(turns) != "[10 40 50 80 90 120]" || fmt.Sprint(calls) != "[10 0 10 0 10 0]" {
		t.Fatalf("usage events: turn totals %v, calls %v; want [10 40 50 80 90 120] and [10 0 10 0 10 0]", turns, calls)
	}
	if res.LastMessage == nil || res.LastMessage.Content != "working" {
		t.Fatalf("the partial output is lost: %+v", res.LastMessage)
	}
}

func TestBudget_AnAgentsMeterBoundsEveryTurnItHasAndItsTurnsRoundTrips(t *testing.T) {
	m := &funcModel{reply: func(context.Context, *llm.Request) ([]llm.Event, error) { return text("hi"), nil }}
	parent := budget.New(budget.Limits{Turns: 2})
	a := agent.New(agent.Options{ID: t.Name(), Model: m, Meter: parent.Child(budget.Limits{})})
	defer a.Close()
	for i := range 2 {
		if res, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {}); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("turn %d: %+v %v", i, res, err)
		}
	}
	res, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopMaxTurnRequests || res.Exhausted == nil || !res.Exhausted.Turns {
		t.Fatalf("third turn %+v %v, want max_turn_requests from the meter's bound of 2 round trips", res, err)
	}
	if n := m.calls.Load(); n != 2 {
		t.Fatalf("model called %d times, want 2", n)
	}
	if got := parent.Usage().TotalTokens; got != 30 {
		t.Fatalf("the meter above the agent was charged %d tokens, want 30", got)
	}
}
