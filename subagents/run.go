// This file implements the wrapper the Service puts around every provider
// run: it reports the run's start and, exactly once, its end.

package subagents

import (
	"context"
	"sync"
)

// tracked wraps a provider's Run. A watcher goroutine, owned by the run,
// waits for the run to settle and then publishes the end event; Wait reads
// what the watcher saw, so the provider's Wait is called exactly once.
type tracked struct {
	inner    Run
	svc      *Service
	provider string
	parent   string

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

// track publishes the start of inner and returns it wrapped, keeping
// exactly the runtime capabilities (Steerable, Resumable) inner has.
func (s *Service) track(inner Run, provider, parent string) Run {
	ctx, cancel := context.WithCancel(context.Background())
	t := &tracked{inner: inner, svc: s, provider: provider, parent: parent, watchCtx: ctx, stopWatch: cancel, done: make(chan struct{})}
	s.publish(Event{Kind: EventStart, Provider: provider, RunID: inner.ID(), ParentSessionID: parent})
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

func (t *tracked) ID() string { return t.inner.ID() }

func (t *tracked) Wait(ctx context.Context) (Result, error) {
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

func (t *tracked) Cancel() { t.inner.Cancel() }

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

// resume continues the run through the provider and tracks the new run
// like any other: a start event now, an end event when it settles.
func (t *tracked) resume(ctx context.Context, prompt string) (Run, error) {
	next, err := t.inner.(Resumable).Resume(ctx, prompt)
	if err != nil {
		return nil, err
	}
	return t.svc.track(next, t.provider, t.parent), nil
}
