package subagents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

func intp(n int) *int { return &n }

func TestStart_DepthLimitRejectedBeforeAnyChildExistsNamingBothNumbers(t *testing.T) {
	cases := []struct {
		name        string
		depth, max  int
		wantReject  bool
		wantNumbers []string
	}{
		{"a child below the default limit starts", 2, 0, false, nil},
		{"a child past the default limit is rejected", subagents.DefaultMaxDepth, 0, true, []string{"depth 4", "limit of 3"}},
		{"a child past a scope's own limit is rejected", 1, 1, true, []string{"depth 2", "limit of 1"}},
		{"a child at exactly the limit starts", 0, 1, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := subagents.NewService(nil)
			p := &fakeProvider{name: "p"}
			svc.RegisterProvider(p)
			ch := events(t, svc)
			run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: &subagents.Scope{Depth: tc.depth, MaxDepth: tc.max}})
			if !tc.wantReject {
				if err != nil {
					t.Fatal(err)
				}
				run.Dispose()
				return
			}
			if !errors.Is(err, subagents.ErrDepthLimit) {
				t.Fatalf("err = %v, want DEPTH_LIMIT", err)
			}
			for _, n := range tc.wantNumbers {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("%q does not name %q", err, n)
				}
			}
			if p.starts.Load() != 0 {
				t.Fatal("the provider was asked to start a child")
			}
			expectNothingBefore(t, svc, ch)
		})
	}
}

func TestChildLimits_AnAncestorsDepthLimitBindsItsWholeSubtree(t *testing.T) {
	cases := []struct {
		name           string
		parent         subagents.Scope
		limit          *int
		depth, subtree int
	}{
		{"no limit inherits the default", subagents.Scope{}, nil, 1, subagents.DefaultMaxDepth},
		{"no limit inherits the scope's", subagents.Scope{Depth: 1, MaxDepth: 5}, nil, 2, 5},
		{"a depth limit of zero forbids delegation below the child", subagents.Scope{}, intp(0), 1, 1},
		{"a depth limit lowers the subtree's limit", subagents.Scope{Depth: 1, MaxDepth: 9}, intp(2), 2, 4},
		{"a depth limit never raises the limit in force", subagents.Scope{Depth: 1, MaxDepth: 3}, intp(10), 2, 3},
		{"a negative depth limit counts as zero", subagents.Scope{}, intp(-4), 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, s := subagents.ChildLimits(subagents.StartRequest{Parent: &tc.parent, DepthLimit: tc.limit})
			if d != tc.depth || s != tc.subtree {
				t.Fatalf("ChildLimits = %d, %d; want %d, %d", d, s, tc.depth, tc.subtree)
			}
		})
	}
	t.Run("a grandchild under a zero depth limit is rejected", func(t *testing.T) {
		_, sub := subagents.ChildLimits(subagents.StartRequest{Parent: &subagents.Scope{}, DepthLimit: intp(0)})
		err := subagents.CheckDepth(subagents.StartRequest{Parent: &subagents.Scope{Depth: 1, MaxDepth: sub}})
		if !errors.Is(err, subagents.ErrDepthLimit) || !strings.Contains(err.Error(), "depth 2") || !strings.Contains(err.Error(), "limit of 1") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestStart_NeedsAParentScope(t *testing.T) {
	svc := subagents.NewService(nil)
	p := &fakeProvider{name: "p"}
	svc.RegisterProvider(p)
	_, err := svc.Start(t.Context(), "p", subagents.StartRequest{Prompt: "x"})
	if !errors.Is(err, subagents.ErrInvalidRequest) || p.starts.Load() != 0 {
		t.Fatalf("err = %v, starts = %d", err, p.starts.Load())
	}
}

func TestStart_AnnouncesStartThenEndAroundTheRun(t *testing.T) {
	svc := subagents.NewService(nil)
	fr := newFakeRun("child-7", subagents.Result{StopReason: subagents.StopCompleted, Output: "done",
		LastMessage: &llm.Message{Role: llm.RoleAssistant, Content: "done"}}, nil)
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
	ch := events(t, svc)
	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	ev := recv(t, ch)
	if ev.Kind != subagents.EventStart || ev.Provider != "p" || ev.RunID != "child-7" || ev.ParentSessionID != "s_main" {
		t.Fatalf("start event = %+v", ev)
	}
	fr.finish()
	res, err := run.Wait(t.Context())
	if err != nil || res.Output != "done" {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	ev = recv(t, ch)
	if ev.Kind != subagents.EventEnd || ev.RunID != "child-7" || ev.StopReason != subagents.StopCompleted || ev.LastMessage == nil || ev.LastMessage.Content != "done" {
		t.Fatalf("end event = %+v", ev)
	}
	run.Dispose()
	expectNothingBefore(t, svc, ch)
}

func TestStart_FailedStartLeavesNothingAndAnnouncesNothing(t *testing.T) {
	svc := subagents.NewService(nil)
	boom := errors.New("boom")
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return nil, boom }})
	ch := events(t, svc)
	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if !errors.Is(err, boom) || run != nil {
		t.Fatalf("Start = %v, %v", run, err)
	}
	expectNothingBefore(t, svc, ch)
}

func TestEnd_FiresExactlyOnceWhetherWaitedOrDisposed(t *testing.T) {
	for _, waited := range []bool{true, false} {
		name := "disposed without waiting"
		if waited {
			name = "waited, then disposed twice"
		}
		t.Run(name, func(t *testing.T) {
			svc := subagents.NewService(nil)
			fr := newFakeRun("r", subagents.Result{StopReason: subagents.StopCompleted}, nil)
			svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
			ch := events(t, svc)
			run, _ := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
			if waited {
				fr.finish()
				run.Wait(t.Context())
				run.Wait(t.Context())
			}
			run.Dispose()
			run.Dispose()
			if fr.disposed.Load() != 1 {
				t.Fatalf("provider run disposed %d times", fr.disposed.Load())
			}
			if ev := recv(t, ch); ev.Kind != subagents.EventStart {
				t.Fatalf("got %+v", ev)
			}
			if ev := recv(t, ch); ev.Kind != subagents.EventEnd {
				t.Fatalf("got %+v", ev)
			}
			expectNothingBefore(t, svc, ch)
		})
	}
}

func TestEnd_NoLastMessageWhenTheRunFailedAtTheInfrastructureLevel(t *testing.T) {
	svc := subagents.NewService(nil)
	fr := newFakeRun("r", subagents.Result{LastMessage: &llm.Message{Content: "never seen"}}, errors.New("transport lost"))
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
	ch := events(t, svc)
	run, _ := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	fr.finish()
	if _, err := run.Wait(t.Context()); err == nil {
		t.Fatal("Wait hid the infrastructure failure")
	}
	run.Dispose()
	recv(t, ch)
	ev := recv(t, ch)
	if ev.Kind != subagents.EventEnd || ev.LastMessage != nil || ev.StopReason != subagents.StopError {
		t.Fatalf("end event = %+v", ev)
	}
}

func TestWait_ReturnsCtxErrorWhenCtxEndsFirst(t *testing.T) {
	svc := subagents.NewService(nil)
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) {
		return newFakeRun("r", subagents.Result{}, nil), nil
	}})
	run, _ := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	defer run.Dispose()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := run.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestStart_RunKeepsExactlyTheProvidersRuntimeCapabilities(t *testing.T) {
	cases := []struct {
		name          string
		run           func() subagents.Run
		steer, resume bool
	}{
		{"a plain run is neither steerable nor resumable", func() subagents.Run { return newFakeRun("r", subagents.Result{}, nil) }, false, false},
		{"a steerable run stays steerable only", func() subagents.Run { return steerRun{newFakeRun("r", subagents.Result{}, nil)} }, true, false},
		{"a resumable run stays resumable only", func() subagents.Run { return resumeRun{newFakeRun("r", subagents.Result{}, nil)} }, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := subagents.NewService(nil)
			svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return tc.run(), nil }})
			run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Dispose()
			_, steer := run.(subagents.Steerable)
			_, resume := run.(subagents.Resumable)
			if steer != tc.steer || resume != tc.resume {
				t.Fatalf("steerable=%v resumable=%v, want %v %v", steer, resume, tc.steer, tc.resume)
			}
		})
	}
	t.Run("a resumed run is tracked like a new one", func(t *testing.T) {
		svc := subagents.NewService(nil)
		svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) {
			return resumeRun{newFakeRun("r", subagents.Result{}, nil)}, nil
		}})
		ch := events(t, svc)
		run, _ := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
		run.Dispose()
		next, err := run.(subagents.Resumable).Resume(t.Context(), "more")
		if err != nil {
			t.Fatal(err)
		}
		next.Dispose()
		kinds := []subagents.EventKind{recv(t, ch).Kind, recv(t, ch).Kind, recv(t, ch).Kind, recv(t, ch).Kind}
		want := []subagents.EventKind{subagents.EventStart, subagents.EventEnd, subagents.EventStart, subagents.EventEnd}
		for i := range want {
			if kinds[i] != want[i] {
				t.Fatalf("events = %v, want %v", kinds, want)
			}
		}
	})
}

func TestObserve_MutatingLastMessageDoesNotChangeTheResult(t *testing.T) {
	svc := subagents.NewService(nil)
	reasoning := "why"
	fr := newFakeRun("r", subagents.Result{StopReason: subagents.StopCompleted, Output: "answer",
		LastMessage: &llm.Message{Role: llm.RoleAssistant, Content: "answer", Reasoning: &reasoning, ToolCalls: []llm.ToolCall{{ID: "1"}}}}, nil)
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
	mutated := make(chan struct{})
	second := make(chan subagents.Event, 4)
	svc.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventEnd {
			ev.LastMessage.Content = "corrupted"
			*ev.LastMessage.Reasoning = "corrupted"
			ev.LastMessage.ToolCalls[0].ID = "corrupted"
			close(mutated)
		}
	})
	svc.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventEnd {
			<-mutated
			second <- ev
		}
	})
	run, _ := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	fr.finish()
	ev := recv(t, second)
	res, _ := run.Wait(t.Context())
	run.Dispose()
	if res.LastMessage.Content != "answer" || *res.LastMessage.Reasoning != "why" || res.LastMessage.ToolCalls[0].ID != "1" {
		t.Fatalf("the caller's result was changed: %+v", res.LastMessage)
	}
	if ev.LastMessage.Content != "answer" || *ev.LastMessage.Reasoning != "why" {
		t.Fatalf("one observer's mutation reached another: %+v", ev.LastMessage)
	}
}

func TestObserve_BlockingObserverDoesNotBlockTheRunOrOtherObservers(t *testing.T) {
	svc := subagents.NewService(nil)
	fr := newFakeRun("r", subagents.Result{StopReason: subagents.StopCompleted}, nil)
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
	release := make(chan struct{})
	blocked := make(chan struct{}, 8)
	stop := svc.Observe(func(subagents.Event) {
		blocked <- struct{}{}
		<-release
	})
	ch := events(t, svc)
	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, blocked)
	fr.finish()
	if res, err := run.Wait(t.Context()); err != nil || res.StopReason != subagents.StopCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	run.Dispose()
	if recv(t, ch).Kind != subagents.EventStart || recv(t, ch).Kind != subagents.EventEnd {
		t.Fatal("the other observer missed events")
	}
	stop()
	close(release)
}

func TestObserve_PanickingObserverIsContainedAndLaterEventsStillArrive(t *testing.T) {
	svc := subagents.NewService(nil)
	var calls atomic.Int32
	svc.Observe(func(subagents.Event) {
		calls.Add(1)
		panic("observer bug")
	})
	ch := events(t, svc)
	fr := newFakeRun("r", subagents.Result{StopReason: subagents.StopCompleted, Output: "ok"}, nil)
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return fr, nil }})
	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	fr.finish()
	res, err := run.Wait(t.Context())
	run.Dispose()
	if err != nil || res.Output != "ok" {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	for _, want := range []subagents.EventKind{subagents.EventProviderAdded, subagents.EventStart, subagents.EventEnd} {
		if ev := recv(t, ch); ev.Kind != want {
			t.Fatalf("got %v, want %v", ev.Kind, want)
		}
	}
}

func TestObserve_StopUnsubscribes(t *testing.T) {
	svc := subagents.NewService(nil)
	var calls atomic.Int32
	stop := svc.Observe(func(subagents.Event) { calls.Add(1) })
	stop()
	stop()
	ch := events(t, svc)
	expectNothingBefore(t, svc, ch)
	if calls.Load() != 0 {
		t.Fatalf("a stopped observer was called %d times", calls.Load())
	}
}
