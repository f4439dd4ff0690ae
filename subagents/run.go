// This file implements the wrapper the Service puts around every provider
// run: it reports the run's start and, exactly once, its end.

package subagents

import (
	"context"
	"sync"
)

// tracked wraps a provider's Run. A watcher goroutine, owned by the run,
// waits for the run to settle and then publishes the end event; Wait
// returns what the watcher saw. A run that is [Settling] is followed
// through Done, and the owner's Wait is passed on to it (it may begin the
// child's work); any other run's Wait is called once, by the watcher.
type tracked struct {
	wrapped

	// watchCtx ends the watcher's wait once Dispose has returned, for a
	// provider whose run never settles on its own.
	watchCtx  context.Context
	stopWatch context.CancelFunc
	done      chan struct{}
	res       Result // set before done is closed
	err       error  // set before done is closed

	disposeOnce sync.Once
	disposeErr  error
}

// wrapped is what each of the Service's wrappers holds: the provider's
// run, and what a run resumed from it is tracked under.
type wrapped struct {
	inner    Run
	svc      *Service
	provider string
	parent   string
}

func (w *wrapped) ID() string  { return w.inner.ID() }
func (w *wrapped) Cancel()     { w.inner.Cancel() }
func (w *wrapped) unwrap() Run { return w.inner }

// resume continues the run through the provider and tracks the new run
// like any other: a start event now, an end event when it settles.
func (w *wrapped) resume(ctx context.Context, prompt string) (Run, error) {
	next, err := w.inner.(Resumable).Resume(ctx, prompt)
	if err != nil {
		return nil, err
	}
	return w.svc.track(next, w.provider, w.parent), nil
}

// track publishes the start of inner and returns it wrapped, keeping
// exactly the runtime capabilities (Steerable, Resumable) inner has. A
// [Reachable] run is held reachable until every observer the start went
// to has seen it.
func (s *Service) track(inner Run, provider, parent string) Run {
	ctx, cancel := context.WithCancel(context.Background())
	t := &tracked{wrapped: wrapped{inner: inner, svc: s, provider: provider, parent: parent}, watchCtx: ctx, stopWatch: cancel, done: make(chan struct{})}
	ev := Event{Kind: EventStart, Provider: provider, RunID: inner.ID(), ParentSessionID: parent}
	if r, ok := inner.(Reachable); ok {
		ev.hold = newStartHold(r.HoldReachable())
	}
	s.publish(ev)
	ev.hold.done()
	go t.watch()
	_, steer := inner.(Steerable)
	_, resume := inner.(Resumable)
	switch {
	case steer && resume:
		return &steerResumeRun{t}
	case steer:
		return &steerRun{t}
	case resume:
		return &resumeRun{t}
	}
	return t
}

func (t *tracked) watch() {
	if s, ok := t.inner.(Settling); ok {
		// Waiting here must not count as the owner's Wait.
		select {
		case <-s.Done():
		case <-t.watchCtx.Done():
		}
	}
	res, err := t.inner.Wait(t.watchCtx)
	t.res, t.err = res, err
	ev := Event{Kind: EventEnd, Provider: t.provider, RunID: t.inner.ID(), ParentSessionID: t.parent, StopReason: res.StopReason}
	if err != nil {
		ev.StopReason = StopError
	} else if res.LastMessage != nil {
		c := res.LastMessage.Clone()
		ev.LastMessage = &c
	}
	t.svc.publish(ev)
	close(t.done)
}

func (t *tracked) Wait(ctx context.Context) (Result, error) {
	if _, ok := t.inner.(Settling); ok {
		// The owner's Wait is the provider's to see; its result is the
		// watcher's, which publishes the end before Wait returns.
		_, _ = t.inner.Wait(ctx)
	}
	select {
	case <-t.done:
		return t.res, t.err
	default:
	}
	select {
	case <-t.done:
		return t.res, t.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

func (t *tracked) Dispose() error {
	t.disposeOnce.Do(func() {
		t.disposeErr = t.inner.Dispose()
		t.stopWatch()
		<-t.done
	})
	return t.disposeErr
}

type steerRun struct{ *tracked }

func (r *steerRun) SendMessage(ctx context.Context, text string) error {
	return r.inner.(Steerable).SendMessage(ctx, text)
}

type resumeRun struct{ *tracked }

func (r *resumeRun) Resume(ctx context.Context, prompt string) (Run, error) {
	return r.resume(ctx, prompt)
}

type steerResumeRun struct{ *tracked }

func (r *steerResumeRun) SendMessage(ctx context.Context, text string) error {
	return r.inner.(Steerable).SendMessage(ctx, text)
}

func (r *steerResumeRun) Resume(ctx context.Context, prompt string) (Run, error) {
	return r.resume(ctx, prompt)
}
