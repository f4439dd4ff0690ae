package spawn_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

// twoStep is a child that calls noop once and then answers "done".
var twoStep = st.Model(func(_ context.Context, req *llm.Request) st.Reply {
	if len(st.ToolResults(req)) == 0 {
		return st.Reply{Text: "working", ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 1, TotalTokens: 6}}
	}
	return st.Reply{Text: "done", Usage: &llm.Usage{InputTokens: 7, OutputTokens: 2, TotalTokens: 9}}
})

func noop(t *testing.T, reg *tools.Registry) {
	st.Register(t, reg, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { return &tools.Result{Output: "ok"}, nil }})
}

func TestExposure_AnnounceComesFirstAndIdleBeforeWaitReturns(t *testing.T) {
	ex := &st.Exposure{}
	p := setup(t, st.ParentOptions{Model: twoStep, Expose: ex})
	noop(t, p.Tools)
	run := start(t, p, subagents.StartRequest{Prompt: "do it", Name: "subagent", Description: "Do the thing"})
	res := wait(t, run)
	lines := ex.Lines() // read right after Wait: idle must already be there
	child := res.ChildSessionID
	if child != "s_main/sa1" {
		t.Fatalf("child session = %q", child)
	}
	want := []string{
		"announce s_main/sa1 on s_main",
		"message s_main -> s_main/sa1: do it",
		"state s_main/sa1 running",
	}
	if !slices.Equal(lines[:3], want) {
		t.Fatalf("first calls = %q, want %q", lines[:3], want)
	}
	if last := lines[len(lines)-1]; last != "state s_main/sa1 idle completed" {
		t.Fatalf("last call before Wait returned = %q (all: %q)", last, lines)
	}
	for _, l := range lines[3 : len(lines)-1] {
		if !strings.HasPrefix(l, "emit s_main/sa1 ") {
			t.Fatalf("unexpected call between running and idle: %q", l)
		}
	}
	evs := ex.Events(child)
	var kinds []string
	for _, ev := range evs {
		switch ev.(type) {
		case agent.MessageChunk:
			kinds = append(kinds, "message")
		case agent.ToolCallStarted:
			kinds = append(kinds, "tool")
		}
	}
	if !slices.Contains(kinds, "message") || !slices.Contains(kinds, "tool") {
		t.Fatalf("the child's events did not all reach its stream: %v", kinds)
	}
	states := ex.States(child)
	idle := states[len(states)-1]
	if idle.Usage == nil || idle.Usage.TotalTokens != 15 {
		t.Fatalf("idle usage = %+v", idle.Usage)
	}
	a, _ := ex.Announcement(child)
	if a.Title != "subagent" || a.Description != "Do the thing" || a.Cancel == nil || a.Cwd != "" {
		t.Fatalf("announcement = %+v", a)
	}
	run.Dispose()
	if lines := ex.Lines(); lines[len(lines)-1] != "forget s_main/sa1" {
		t.Fatalf("Dispose did not forget the child: %q", lines[len(lines)-1])
	}
}

func TestExposure_AFailedChildGoesIdleWithTheErrorText(t *testing.T) {
	ex := &st.Exposure{}
	p := setup(t, st.ParentOptions{Expose: ex, Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Err: llm.NewAPIError(500, "", "overloaded", "", true, nil)}
	})})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	states := ex.States(res.ChildSessionID)
	idle := states[len(states)-1]
	if idle.State != subagents.StateIdle || idle.StopReason != subagents.StopError || idle.Error != res.Diagnostic || idle.Error == "" {
		t.Fatalf("idle = %+v, diagnostic %q", idle, res.Diagnostic)
	}
}

func TestExposure_TheEditorsCancelStopsTheChildWhichGoesIdleCancelled(t *testing.T) {
	ex := &st.Exposure{}
	called := make(chan struct{}, 1)
	p := setup(t, st.ParentOptions{Expose: ex, Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		called <- struct{}{}
		return st.Reply{Block: make(chan struct{})}
	})})
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	result := collect(t, run)
	st.Recv(t, called)
	a, _ := ex.Announcement("s_main/sa1")
	a.Cancel()
	res := st.Recv(t, result)
	states := ex.States("s_main/sa1")
	if res.StopReason != subagents.StopAborted || states[len(states)-1].StopReason != subagents.StopAborted {
		t.Fatalf("result %s, states %+v", res.StopReason, states)
	}
}

func TestExposure_AFailedAnnouncementFailsStartAndLeavesNothing(t *testing.T) {
	ex := &st.Exposure{AnnounceErr: errors.New("connection closed")}
	p := setup(t, st.ParentOptions{Expose: ex})
	ch := make(chan subagents.Event, 8)
	stop := p.Service.Observe(func(ev subagents.Event) { ch <- ev })
	defer stop()
	_, err := p.Service.Start(t.Context(), "spawn", subagents.StartRequest{Prompt: "x", Parent: p.Scope})
	if err == nil || p.Registry.Len() != 1 {
		t.Fatalf("err = %v, live agents = %d", err, p.Registry.Len())
	}
	if len(ex.Lines()) != 0 {
		t.Fatalf("calls after a failed announcement: %q", ex.Lines())
	}
	// Nothing was announced to observers: the next event is a marker's.
	dispose, _ := p.Service.RegisterProvider(&markerProvider{})
	defer dispose()
	if ev := st.Recv(t, ch); ev.Provider != "marker" {
		t.Fatalf("unexpected event %+v", ev)
	}
}

func TestExposure_AnExposedChildsScopeCarriesItsSessionSoItsChildrenNestUnderIt(t *testing.T) {
	ex := &st.Exposure{}
	scopes := make(chan *subagents.Scope, 1)
	p := setup(t, st.ParentOptions{Expose: ex, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "probe", Arguments: "{}"}}}
		}
		return st.Reply{Text: "ok"}
	})})
	st.Register(t, p.Tools, &st.Delegating{ToolName: "probe", Fn: func(_ context.Context, _ *tools.Call, sc *subagents.Scope) (*tools.Result, error) {
		scopes <- sc
		return &tools.Result{Output: "ok"}, nil
	}})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	sc := st.Recv(t, scopes)
	if sc.SessionID != res.ChildSessionID || sc.Expose != p.Scope.Expose {
		t.Fatalf("child scope session %q expose %v", sc.SessionID, sc.Expose)
	}
}

type markerProvider struct{}

func (markerProvider) Name() string                         { return "marker" }
func (markerProvider) Capabilities() subagents.Capabilities { return subagents.Capabilities{} }
func (markerProvider) InheritsParentContext() bool          { return false }
func (markerProvider) Start(context.Context, subagents.StartRequest) (subagents.Run, error) {
	return nil, errors.New("marker")
}
