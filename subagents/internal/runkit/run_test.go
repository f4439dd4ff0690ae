package runkit

import (
	"context"
	"errors"
	"testing"

	"github.com/dshd/dshd/subagents"
)

// testRun is a provider's run as runkit sees it.
type testRun struct {
	*Run
	cancels int
}

func (r *testRun) Cancel() { r.cancels++ }

func newTestRun() *testRun { return &testRun{Run: NewRun()} }

func TestRun_WaitReturnsTheResultOnceFinishedAndOnlyCtxErrorsBefore(t *testing.T) {
	r := newTestRun()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Wait(ctx); !errors.Is(err, context.Canceled) || r.Ended() {
		t.Fatalf("Wait before the end = %v, ended %v", err, r.Ended())
	}
	r.Finish(subagents.Result{Output: "done"})
	res, err := r.Wait(ctx) // a finished run answers even on a done ctx
	if err != nil || res.Output != "done" || !r.Ended() {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
}

func TestRun_DisposeOnceCancelsARunningRunAndReleasesOnce(t *testing.T) {
	r := newTestRun()
	released := 0
	cancel := func() {
		r.Cancel()
		r.Finish(subagents.Result{StopReason: subagents.StopAborted})
	}
	r.DisposeOnce(cancel, func() { released++ })
	r.DisposeOnce(cancel, func() { released++ })
	if r.cancels != 1 || released != 1 || !r.Disposed() {
		t.Fatalf("cancels %d, releases %d, disposed %v", r.cancels, released, r.Disposed())
	}

	ended := newTestRun()
	ended.Finish(subagents.Result{})
	ended.DisposeOnce(ended.Cancel, func() {})
	if ended.cancels != 0 {
		t.Fatal("an ended run was cancelled")
	}
}

func TestRuns_ResumeIsRefusedUntilItMayContinue(t *testing.T) {
	code := func(err error) subagents.Code {
		var se *subagents.Error
		if !errors.As(err, &se) {
			return ""
		}
		return se.Code
	}
	var rs Runs[*testRun]
	first := newTestRun()
	rs.Hold()
	rs.Begin(first)
	if got := code(rs.Resume(first)); got != subagents.CodeInvalidRequest {
		t.Fatalf("resuming a running run: %q", got)
	}
	rs.CancelCurrent()
	if first.cancels != 1 {
		t.Fatal("CancelCurrent did not reach the current run")
	}
	first.Finish(subagents.Result{})
	if err := rs.Resume(first); err != nil {
		t.Fatalf("resuming an ended run: %v", err)
	}
	second := newTestRun()
	rs.Begin(second)
	if got := code(rs.Resume(first)); got != subagents.CodeInvalidRequest {
		t.Fatalf("resuming while another run runs: %q", got)
	}
	second.Finish(subagents.Result{})
	if rs.Release() {
		t.Fatal("the first release closed a child still held by the resumed run")
	}
	if !rs.Release() {
		t.Fatal("the last release did not close the child")
	}
	if got := code(rs.Resume(second)); got != subagents.CodeRunFinished {
		t.Fatalf("resuming a closed child: %q", got)
	}
	var empty Runs[*testRun]
	if _, ok := empty.Current(); ok {
		t.Fatal("a child without runs has a current one")
	}
	empty.CancelCurrent() // nothing to cancel, no panic
}
