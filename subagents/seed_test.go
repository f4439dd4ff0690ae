package subagents_test

// Tests of the seed contract's start observers (issue 15).

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/subagents"
)

// reachableRun is a fake run whose child start observers are meant to
// reach; it counts the holds the service takes and reports releases.
type reachableRun struct {
	*fakeRun
	holds    atomic.Int32
	released chan struct{}
}

func (r *reachableRun) HoldReachable() func() {
	r.holds.Add(1)
	return func() { r.released <- struct{}{} }
}

// The seed's "A subagent/start listener can still reach the live child via
// ctx.agents.get(info.id)", at the service: a Reachable run is held until
// every observer the start went to has seen it — one still running it
// keeps the hold past the run's end and Dispose; one that panicked, or
// was stopped with the start still queued, lets go — and an observer that
// subscribes later is not waited for.
func TestObserve_AStartListenerCanStillReachTheLiveChild(t *testing.T) {
	svc := subagents.NewService(nil)
	releaseSlow, releaseStuck := make(chan struct{}), make(chan struct{})
	inSlow, inStuck := make(chan struct{}, 1), make(chan struct{}, 1)
	svc.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventStart {
			inSlow <- struct{}{}
			<-releaseSlow
		}
	})
	svc.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventStart {
			panic("observer bug")
		}
	})
	stopStuck := svc.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventProviderAdded {
			inStuck <- struct{}{}
			<-releaseStuck // the start waits behind this in its queue
		}
	})
	defer close(releaseStuck)
	rr := &reachableRun{fakeRun: newFakeRun("child-1", subagents.Result{StopReason: subagents.StopCompleted}, nil), released: make(chan struct{}, 2)}
	svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return rr, nil }})
	recv(t, inStuck)

	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	svc.Observe(func(subagents.Event) {}) // too late for this start
	recv(t, inSlow)
	rr.finish()
	if _, err := run.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	run.Dispose()
	stopStuck()
	select {
	case <-rr.released:
		t.Fatal("released while an observer was still looking at the start")
	default:
	}
	close(releaseSlow)
	recv(t, rr.released)
	if n := rr.holds.Load(); n != 1 {
		t.Fatalf("%d holds, want 1", n)
	}
	select {
	case <-rr.released:
		t.Fatal("released twice")
	default:
	}
}

// An observer that names the kinds it wants gets only those, and one that
// does not want start events holds no child: the bindings watch only
// their providers, so a disposed child leaves the registry at once.
func TestObserve_KindsLimitWhatAnObserverGetsAndHolds(t *testing.T) {
	svc := subagents.NewService(nil)
	got := make(chan subagents.Event, 8)
	stop := svc.Observe(func(ev subagents.Event) { got <- ev }, subagents.EventProviderAdded, subagents.EventProviderRemoved)
	defer stop()
	rr := &reachableRun{fakeRun: newFakeRun("child-1", subagents.Result{StopReason: subagents.StopCompleted}, nil), released: make(chan struct{}, 1)}
	dispose, _ := svc.RegisterProvider(&fakeProvider{name: "p", start: func(context.Context, subagents.StartRequest) (subagents.Run, error) { return rr, nil }})
	run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-rr.released: // Start's own share went with no observer waiting
	default:
		t.Fatal("the child is held for an observer that does not watch starts")
	}
	rr.finish()
	run.Wait(t.Context())
	run.Dispose()
	dispose()
	if a, r := recv(t, got), recv(t, got); a.Kind != subagents.EventProviderAdded || r.Kind != subagents.EventProviderRemoved {
		t.Fatalf("got %s then %s", a.Kind, r.Kind)
	}
	expectNothingBefore(t, svc, got)
}
