package subagent_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

// toolMessages returns the contents of the tool messages in h, in order.
func toolMessages(h agent.History) []string {
	var out []string
	for _, m := range h.All() {
		if m.Role == llm.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestFanOut_AHundredChildrenInOneTurnAllCompleteAndReturnInOrder(t *testing.T) {
	const n = 100
	var childCalls atomic.Int32
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if st.IsChild(req) {
			childCalls.Add(1)
			return st.Reply{Text: "result of " + st.LastUser(req)}
		}
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{ToolCalls: subagentCalls(n, func(i int) string { return fmt.Sprintf("task %d", i) })}
		}
		return st.Reply{Text: fmt.Sprintf("collected %d", len(st.ToolResults(req)))}
	})})
	res, err := parentTurn(t, t.Context(), p)
	if err != nil || res.StopReason != agent.StopEndTurn || res.LastMessage.Content != "collected 100" {
		t.Fatalf("parent turn = %+v, %v", res, err)
	}
	got := toolMessages(p.Agent.History())
	if len(got) != n {
		t.Fatalf("%d tool results", len(got))
	}
	for i, m := range got {
		if m != fmt.Sprintf("result of task %d", i) {
			t.Fatalf("result %d = %q", i, m)
		}
	}
	if childCalls.Load() != n || p.Registry.Len() != 1 {
		t.Fatalf("%d child model calls, %d live agents", childCalls.Load(), p.Registry.Len())
	}
}

func TestDepth_ChildrenThatRecursePastTheLimitGetAnErrorNamingBothNumbers(t *testing.T) {
	var starts atomic.Int32
	p := world(t, st.ParentOptions{MaxDepth: 2, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if res := st.ToolResults(req); len(res) > 0 {
			return st.Reply{Text: res[0]}
		}
		starts.Add(1)
		return st.Reply{ToolCalls: subagentCalls(1, func(int) string { return "delegate this again" })}
	})})
	res, err := parentTurn(t, t.Context(), p)
	if err != nil || res.StopReason != agent.StopEndTurn {
		t.Fatalf("parent turn = %+v, %v", res, err)
	}
	if !contains(res.LastMessage.Content, "depth 3", "depth limit of 2") {
		t.Fatalf("the deepest attempt's error did not name both numbers: %q", res.LastMessage.Content)
	}
	// The parent, the child and the grandchild each tried to delegate.
	if starts.Load() != 3 || p.Registry.Len() != 1 {
		t.Fatalf("%d delegating agents, %d live agents", starts.Load(), p.Registry.Len())
	}
}

func TestCancel_DuringFanOutEveryChildStopsAndNoGoroutineIsLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 20
	inModel := make(chan struct{}, n)
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if st.IsChild(req) {
			inModel <- struct{}{}
			return st.Reply{Block: make(chan struct{})}
		}
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{ToolCalls: subagentCalls(n, func(i int) string { return fmt.Sprint(i) })}
		}
		return st.Reply{Text: "unreachable"}
	})})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan agent.Result, 1)
	go func() {
		res, _ := parentTurn(t, ctx, p)
		done <- res
	}()
	for range n {
		st.Recv(t, inModel)
	}
	if p.Registry.Len() != n+1 {
		t.Fatalf("%d live agents before the cancel", p.Registry.Len())
	}
	cancel()
	if res := st.Recv(t, done); res.StopReason != agent.StopCancelled {
		t.Fatalf("parent ended %s", res.StopReason)
	}
	if p.Registry.Len() != 1 {
		t.Fatalf("%d live agents after the cancel", p.Registry.Len())
	}
}

func TestFailure_AChildWhoseToolPanicsEndsWithStopErrorAndTheParentGoesOn(t *testing.T) {
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if st.IsChild(req) {
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "b", Name: "bomb", Arguments: "{}"}}}
		}
		if res := st.ToolResults(req); len(res) > 0 {
			return st.Reply{Text: "recovered from: " + res[0]}
		}
		return st.Reply{ToolCalls: subagentCalls(1, func(int) string { return "use the bomb" })}
	})})
	st.Register(t, p.Tools, &st.Tool{ToolName: "bomb", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { panic("kaboom") }})
	res, err := parentTurn(t, t.Context(), p)
	if err != nil || res.StopReason != agent.StopEndTurn {
		t.Fatalf("parent turn = %+v, %v", res, err)
	}
	if !contains(res.LastMessage.Content, "The subagent run failed. The tool bomb crashed.") || strings.Contains(res.LastMessage.Content, "kaboom") {
		t.Fatalf("parent saw %q", res.LastMessage.Content)
	}
}

func TestCancel_TheEditorCancellingOneExposedChildLeavesTheParentAndSiblingsRunning(t *testing.T) {
	ex := &st.Exposure{}
	inModel := make(chan string, 2)
	release := make(chan struct{})
	p := world(t, st.ParentOptions{Expose: ex, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if st.IsChild(req) {
			inModel <- st.LastUser(req)
			if st.LastUser(req) == "slow" {
				return st.Reply{Block: make(chan struct{})}
			}
			return st.Reply{Block: release, Text: "sibling done"}
		}
		if res := st.ToolResults(req); len(res) > 0 {
			return st.Reply{Text: strings.Join(res, " | ")}
		}
		return st.Reply{ToolCalls: subagentCalls(2, func(i int) string { return []string{"slow", "fast"}[i] })}
	})})
	done := make(chan agent.Result, 1)
	go func() {
		res, _ := parentTurn(t, t.Context(), p)
		done <- res
	}()
	st.Recv(t, inModel)
	st.Recv(t, inModel)
	var slow string
	for _, id := range []string{"s_main/sa1", "s_main/sa2"} {
		for _, l := range ex.Lines() {
			if l == "message s_main -> "+id+": slow" {
				slow = id
			}
		}
	}
	a, _ := ex.Announcement(slow)
	a.Cancel()
	close(release)
	res := st.Recv(t, done)
	if res.StopReason != agent.StopEndTurn || !contains(res.LastMessage.Content, "The subagent was cancelled.", "sibling done") {
		t.Fatalf("parent = %s %q", res.StopReason, res.LastMessage.Content)
	}
}

func TestFork_ThroughTheToolTheChildSeesTheCompletedTurns(t *testing.T) {
	p := world(t, st.ParentOptions{History: agent.NewHistory(
		llm.Message{Role: llm.RoleUser, Content: "my favourite colour is teal"},
		llm.Message{Role: llm.RoleAssistant, Content: "noted"},
	), Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if strings.Contains(st.LastUser(req), "# Task") {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "teal") {
					return st.Reply{Text: "the colour is teal"}
				}
			}
			return st.Reply{Text: "I do not know"}
		}
		if res := st.ToolResults(req); len(res) > 0 {
			return st.Reply{Text: res[0]}
		}
		return st.Reply{ToolCalls: []llm.ToolCall{{ID: "f", Name: "subagent_fork", Arguments: `{"description":"Recall colour","prompt":"What colour?"}`}}}
	})})
	res, err := parentTurn(t, t.Context(), p)
	if err != nil || res.LastMessage.Content != "the colour is teal" {
		t.Fatalf("parent = %+v, %v", res, err)
	}
}
