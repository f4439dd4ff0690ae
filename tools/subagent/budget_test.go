package subagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// The tasks of a three-level tree: the parent delegates levelOne, whose
// child delegates levelTwo.
const (
	levelOne = "level one task"
	levelTwo = "level two task"
)

func usage(in, out int64) *llm.Usage {
	return &llm.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// delegateTo is a call of the subagent tool with prompt.
func delegateTo(prompt string) []llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"description": "d", "prompt": prompt})
	return []llm.ToolCall{{ID: "call_" + strings.ReplaceAll(prompt, " ", "_"), Name: "subagent", Arguments: string(args)}}
}

// levelOf says which level of the tree a request comes from.
func levelOf(req *llm.Request) int {
	switch first := firstUser(req); {
	case strings.Contains(first, levelTwo):
		return 2
	case strings.Contains(first, levelOne):
		return 1
	}
	return 0
}

func firstUser(req *llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			return m.Content
		}
	}
	return ""
}

// delegatingChild is a model for a child that delegates levelTwo once, at
// 50 tokens, and then answers, and whose grandchild answers at 5 tokens.
var delegatingChild = st.Model(func(_ context.Context, req *llm.Request) st.Reply {
	switch level := levelOf(req); {
	case len(st.ToolResults(req)) > 0 || level == 2:
		return st.Reply{Text: "answer", Usage: usage(4, 1)}
	case level == 1:
		return st.Reply{ToolCalls: delegateTo(levelTwo), Usage: usage(40, 10)}
	}
	return st.Reply{Text: "unused"}
})

// endlessGrandchild is a model for a three-level tree: the parent
// delegates levelOne and then carries on, the child delegates levelTwo,
// and the grandchild never finishes on its own. The parent's replies
// report parentUsage, the others' belowUsage (nil: none); calls counts
// the model calls of each level.
func endlessGrandchild(calls *[3]atomic.Int64, parentUsage, belowUsage *llm.Usage) st.Model {
	return func(_ context.Context, req *llm.Request) st.Reply {
		level := levelOf(req)
		calls[level].Add(1)
		switch {
		case level == 0 && len(st.ToolResults(req)) > 0:
			return st.Reply{Text: "parent carries on", Usage: parentUsage}
		case level == 0:
			return st.Reply{ToolCalls: delegateTo(levelOne), Usage: parentUsage}
		case level == 1:
			return st.Reply{Text: "child delegating", ToolCalls: delegateTo(levelTwo), Usage: belowUsage}
		}
		return st.Reply{Text: "grandchild working", ToolCalls: []llm.ToolCall{{ID: "n", Name: "noop", Arguments: `{}`}}, Usage: belowUsage}
	}
}

// bindBudget replaces the default subagent tool with spec's binding.
func bindBudget(t *testing.T, o st.ParentOptions, spec string) *st.Parent {
	t.Helper()
	b, err := subagent.ParseBinding(spec)
	if err != nil {
		t.Fatal(err)
	}
	p := world(t, o, b)
	st.Register(t, p.Tools, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) {
		return &tools.Result{Output: "nothing"}, nil
	}})
	return p
}

// subagentResult is the parent's one subagent tool result.
func subagentResult(t *testing.T, p *st.Parent) string {
	t.Helper()
	got := toolMessages(p.Agent.History())
	if len(got) != 1 {
		t.Fatalf("%d tool results in the parent: %q", len(got), got)
	}
	return got[0]
}

func TestUsage_AParentTurnsUsageIsItsOwnPlusEveryLevelBelowIt(t *testing.T) {
	var perLevel [3]atomic.Int64
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		level := levelOf(req)
		u := []*llm.Usage{usage(90, 10), usage(18, 2), usage(2, 1)}[level]
		perLevel[level].Add(u.TotalTokens)
		switch {
		case len(st.ToolResults(req)) > 0:
			return st.Reply{Text: "done at level " + string(rune('0'+level)), Usage: u}
		case level == 0:
			return st.Reply{ToolCalls: delegateTo(levelOne), Usage: u}
		case level == 1:
			return st.Reply{ToolCalls: delegateTo(levelTwo), Usage: u}
		}
		return st.Reply{Text: "leaf answer", Usage: u}
	})})
	res, err := p.Agent.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopEndTurn {
		t.Fatalf("parent turn %+v, %v", res, err)
	}
	sum := perLevel[0].Load() + perLevel[1].Load() + perLevel[2].Load()
	if sum != 2*100+2*20+3 {
		t.Fatalf("the model saw %d, %d and %d tokens per level", perLevel[0].Load(), perLevel[1].Load(), perLevel[2].Load())
	}
	if res.Usage.TotalTokens != sum || res.Usage.InputTokens != 2*90+2*18+2 || res.Usage.OutputTokens != 2*10+2*2+1 {
		t.Fatalf("the parent turn's usage %+v is not the sum of its levels (%d tokens)", res.Usage, sum)
	}
}

func TestUsage_TheToolResultCarriesTheChildsUsageWithItsDescendants(t *testing.T) {
	p := world(t, st.ParentOptions{Model: delegatingChild})
	res := call(t, t.Context(), p, "subagent", "d", levelOne, nil)
	raw := res.RawOutput.(subagent.RawOutput)
	// The child's two calls (50 + 5) and its child's one (5).
	if res.IsError || raw.Usage != *usage(48, 12) || raw.Subagent != "subagent" {
		t.Fatalf("result %+v, rawOutput %+v; want the usage of the child and its child, 60 tokens", res, raw)
	}
}

func TestBudget_AChildsMaxTokensBoundItAndItsDescendants(t *testing.T) {
	var calls [3]atomic.Int64
	p := bindBudget(t, st.ParentOptions{Model: endlessGrandchild(&calls, usage(40, 10), usage(8, 2))}, "subagent=spawn,max-tokens=100")
	res, err := p.Agent.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopEndTurn || res.LastMessage.Content != "parent carries on" {
		t.Fatalf("parent turn %+v, %v", res, err)
	}
	// The child's one call and nine of the grandchild's spend its 100
	// tokens; the grandchild's tenth call and the child's second are never
	// made.
	if calls[1].Load() != 1 || calls[2].Load() != 9 {
		t.Fatalf("the child made %d model calls and the grandchild %d, want 1 and 9", calls[1].Load(), calls[2].Load())
	}
	out := subagentResult(t, p)
	for _, want := range []string{"The subagent stopped: its budget ran out.", "The budget of 100 tokens ran out (100 used).", "Its output before the run ended:\n\nchild delegating"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the parent's tool result %q lacks %q", out, want)
		}
	}
	if res.Usage.TotalTokens != 2*50+100 {
		t.Fatalf("parent turn usage %+v, want 200 tokens", res.Usage)
	}
}

func TestBudget_AChildsMaxTurnsBoundTheRoundTripsOfItAndItsDescendants(t *testing.T) {
	var calls [3]atomic.Int64
	p := bindBudget(t, st.ParentOptions{Model: endlessGrandchild(&calls, nil, nil)}, "subagent=spawn,max-turns=4")
	res, err := p.Agent.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopEndTurn {
		t.Fatalf("parent turn %+v, %v", res, err)
	}
	if calls[1].Load() != 1 || calls[2].Load() != 3 {
		t.Fatalf("the child made %d model calls and the grandchild %d, want 1 and 3", calls[1].Load(), calls[2].Load())
	}
	if out := subagentResult(t, p); !strings.Contains(out, "The subagent stopped: its budget ran out. The budget of 4 model requests ran out.") || !strings.Contains(out, "child delegating") {
		t.Fatalf("the parent's tool result %q", out)
	}
}

func TestBudget_TheTurnLimitBoundsTheWholeTurnWithEveryDescendant(t *testing.T) {
	var calls [2]atomic.Int64
	p := bindBudget(t, st.ParentOptions{TurnLimits: budget.Limits{Tokens: 50}, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		level := min(levelOf(req), 1)
		calls[level].Add(1)
		if level == 0 {
			return st.Reply{Text: "parent delegating", ToolCalls: delegateTo(levelOne), Usage: usage(8, 2)}
		}
		return st.Reply{Text: "child working", ToolCalls: []llm.ToolCall{{ID: "n", Name: "noop", Arguments: `{}`}}, Usage: usage(8, 2)}
	})}, "subagent=spawn")
	res, err := p.Agent.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopMaxTokens || res.Exhausted == nil || res.Exhausted.Limit != 50 {
		t.Fatalf("parent turn %+v, %v; want max_tokens at the turn's bound", res, err)
	}
	if calls[0].Load() != 1 || calls[1].Load() != 4 || res.Usage.TotalTokens != 50 {
		t.Fatalf("parent %d calls, child %d, turn usage %+v; want 1, 4 and 50 tokens", calls[0].Load(), calls[1].Load(), res.Usage)
	}
	if out := subagentResult(t, p); !strings.Contains(out, "The budget of 50 tokens ran out (50 used).") || !strings.Contains(out, "child working") {
		t.Fatalf("the parent's tool result %q", out)
	}
}

func TestUsage_AnExposedChildsIdleStateCarriesItsUsageWithItsDescendants(t *testing.T) {
	ex := &st.Exposure{}
	p := world(t, st.ParentOptions{Expose: ex, Model: delegatingChild})
	res := call(t, t.Context(), p, "subagent", "d", levelOne, nil)
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	states := ex.States("s_main/sa1")
	if len(states) == 0 {
		t.Fatalf("no states; lines %q", ex.Lines())
	}
	idle := states[len(states)-1]
	if idle.State != "idle" || idle.Usage == nil || *idle.Usage != *usage(48, 12) {
		t.Fatalf("the child's last state %+v (usage %+v), want idle with 60 tokens: its own and its child's", idle, idle.Usage)
	}
	// The grandchild's own idle state has only its own call.
	if gs := ex.States("s_main/sa1/sa2"); len(gs) == 0 || gs[len(gs)-1].Usage == nil || *gs[len(gs)-1].Usage != *usage(4, 1) {
		t.Fatalf("grandchild states %+v; lines %q", gs, ex.Lines())
	}
}
