package spawn_test

// Tests named after the dsh-subagent-spawn (and dsh-subagent) test cases
// they mirror (issue 15). The races are run in loops; run them under -race.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// loops is how often a race is tried.
const loops = 300

// countingModel answers at once and counts its calls.
func countingModel(calls *atomic.Int64, text string) st.Model {
	return func(context.Context, *llm.Request) st.Reply {
		calls.Add(1)
		return st.Reply{Text: text}
	}
}

// Mirrors "settles aborted (without running the child) when the request
// signal is ALREADY aborted": no child is built, registered or shown to
// the editor, and the child's model is never called.
func TestStart_SettlesAbortedWithoutRunningTheChildWhenTheRequestSignalIsAlreadyAborted(t *testing.T) {
	var calls atomic.Int64
	ex := &st.Exposure{}
	p := setup(t, st.ParentOptions{Expose: ex, Model: countingModel(&calls, "child answer")})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for i := range loops {
		run, err := p.Service.Start(ctx, spawn.Name, subagents.StartRequest{Prompt: "p", Parent: p.Scope})
		if err != nil {
			t.Fatalf("Start = %v, want a run that settled aborted", err)
		}
		if _, ok := p.Registry.Get(run.ID()); ok {
			t.Fatalf("run %d: an already-cancelled Start built a child", i)
		}
		res := wait(t, run)
		if res.StopReason != subagents.StopAborted || res.Output != "" || res.Diagnostic != "" {
			t.Fatalf("run %d: result = %+v", i, res)
		}
		run.Cancel()
		if err := run.Dispose(); err != nil {
			t.Fatalf("Dispose: %v", err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the child's model was called %d times", n)
	}
	if lines := ex.Lines(); len(lines) != 0 {
		t.Fatalf("the editor was shown children that never existed: %q", lines)
	}
}

// Mirrors "cancelling BEFORE the child turn starts settles aborted, not
// error": a Cancel right after Start — before anyone waits for the run —
// always wins, and the child's model is never called. Dispose before Wait
// runs nothing either.
func TestCancel_CancellingBeforeTheChildTurnStartsSettlesAbortedNotError(t *testing.T) {
	for _, via := range []string{"Cancel", "Dispose"} {
		t.Run(via, func(t *testing.T) {
			var calls atomic.Int64
			p := setup(t, st.ParentOptions{Model: countingModel(&calls, "child answer")})
			for i := range loops {
				run, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "p", Parent: p.Scope})
				if err != nil {
					t.Fatal(err)
				}
				if via == "Cancel" {
					run.Cancel()
					res := wait(t, run)
					if res.StopReason != subagents.StopAborted || res.Output != "" || res.Diagnostic != "" {
						t.Fatalf("run %d: result = %+v", i, res)
					}
				}
				run.Dispose()
				if res := wait(t, run); res.StopReason != subagents.StopAborted {
					t.Fatalf("run %d: after Dispose the result is %+v", i, res)
				}
			}
			if n := calls.Load(); n != 0 {
				t.Fatalf("the child's model was called %d times in %d cancelled runs", n, loops)
			}
		})
	}
}

// Mirrors the seed's "A subagent/start listener can still reach the live
// child via ctx.agents.get(info.id)" with a child fast enough to finish,
// and be disposed, before any observer runs: every start observer finds it
// in the registry, and once every observer has seen the end the child is
// gone from it.
func TestObserve_AStartListenerCanStillReachTheLiveChildViaTheRegistry(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Echo})
	const observers = 3
	type seen struct {
		kind  subagents.EventKind
		id    string
		found bool
	}
	ch := make(chan seen, observers*2*loops)
	for range observers {
		stop := p.Service.Observe(func(ev subagents.Event) {
			if ev.Kind != subagents.EventStart && ev.Kind != subagents.EventEnd {
				return
			}
			a, ok := p.Registry.Get(ev.RunID)
			ch <- seen{ev.Kind, ev.RunID, ok && a.ID() == ev.RunID}
		})
		t.Cleanup(stop)
	}
	for i := range loops {
		run, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "task", Parent: p.Scope})
		if err != nil {
			t.Fatal(err)
		}
		if res := wait(t, run); res.StopReason != subagents.StopCompleted {
			t.Fatalf("result = %+v", res)
		}
		run.Dispose()
		ends := 0
		for ends < observers {
			s := st.Recv(t, ch)
			if s.id != run.ID() {
				t.Fatalf("event for %q, want %q", s.id, run.ID())
			}
			switch s.kind {
			case subagents.EventStart:
				if !s.found {
					t.Fatalf("run %d: a start observer could not reach the child %q", i, s.id)
				}
			case subagents.EventEnd:
				ends++
			}
		}
		if _, ok := p.Registry.Get(run.ID()); ok {
			t.Fatalf("run %d: the child is still registered after every observer saw its end", i)
		}
	}
}

// Mirrors dsh-subagent-acp's "consumes a non-message update (a thought)
// without adding it to the output", for an in-process child: its
// reasoning reaches neither the output nor the last message's content.
func TestOutput_ConsumesAThoughtWithoutAddingItToTheOutput(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Reasoning: "thinking…", Text: "final answer"}
	})})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "p"}))
	if res.StopReason != subagents.StopCompleted || res.Output != "final answer" {
		t.Fatalf("result = %+v", res)
	}
	if res.LastMessage == nil || res.LastMessage.Content != "final answer" {
		t.Fatalf("last message = %+v", res.LastMessage)
	}
}

// Mirrors dsh-agent-loop's "contains a strict-variable render failure: the
// turn errors, the loop keeps serving turns", for a spawned child: a
// system prompt that does not render fails Start, no request reaches the
// model, and the parent's next delegation works.
func TestRender_AFailedChildSystemPromptSendsNoModelRequest(t *testing.T) {
	var calls atomic.Int64
	p := setup(t, st.ParentOptions{Model: countingModel(&calls, "ok")})
	_, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "p", Parent: p.Scope, SystemPrompt: "In {{nowhere}}."})
	if err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("Start = %v, want the render failure naming the variable", err)
	}
	if n := calls.Load(); n != 0 || p.Registry.Len() != 1 {
		t.Fatalf("model calls = %d, live agents = %d", n, p.Registry.Len())
	}
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "p", SystemPrompt: "In {{cwd}}."}))
	if res.StopReason != subagents.StopCompleted || calls.Load() != 1 {
		t.Fatalf("the next delegation: %+v after %d model calls", res, calls.Load())
	}
}
