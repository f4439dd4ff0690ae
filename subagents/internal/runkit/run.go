// This file holds the lifecycle shared by every provider's runs: a run
// ends once and is disposed once, and a child knows its current run, the
// runs that still hold it, and whether it is closed.

package runkit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/subagents"
)

// Run is the provider-independent part of a run. A provider's run type
// embeds a *Run (from [NewRun]), which gives it Wait, and calls Finish
// once its turn has ended and the end was published.
type Run struct {
	done        chan struct{}
	res         subagents.Result // set before done is closed
	disposeOnce sync.Once
	disposed    atomic.Bool
}

// NewRun returns a run that has not ended.
func NewRun() *Run { return &Run{done: make(chan struct{})} }

// Finish ends the run with res: Wait returns it from now on. It is called
// once, by the goroutine that ran the turn.
func (r *Run) Finish(res subagents.Result) {
	r.res = res
	close(r.done)
}

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Ended reports whether the run has ended.
func (r *Run) Ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Wait returns the run's result once its turn ended. A child-level failure
// is a Result with StopError; the error is only ever ctx's.
func (r *Run) Wait(ctx context.Context) (subagents.Result, error) {
	select {
	case <-r.done:
		return r.res, nil
	default:
	}
	select {
	case <-r.done:
		return r.res, nil
	case <-ctx.Done():
		return subagents.Result{}, ctx.Err()
	}
}

// DisposeOnce is the body of a provider's Dispose, run once however often
// Dispose is called: a run that has not ended is cancelled and waited for,
// then it counts as disposed and release lets go of what it holds.
func (r *Run) DisposeOnce(cancel, release func()) {
	r.disposeOnce.Do(func() {
		if !r.Ended() {
			cancel()
			<-r.done
		}
		r.disposed.Store(true)
		release()
	})
}

// Disposed reports whether DisposeOnce ran.
func (r *Run) Disposed() bool { return r.disposed.Load() }

// Settled is the run of a Start that ended before any child existed, for
// instance because its context had already ended: it has its result from
// the start, and nothing to cancel, dispose or resume.
type Settled struct {
	*Run
	id string
}

var _ subagents.Run = (*Settled)(nil)

// NewSettled returns a run called id that ended with res.
func NewSettled(id string, res subagents.Result) *Settled {
	s := &Settled{Run: NewRun(), id: id}
	s.Finish(res)
	return s
}

// ID returns the run's id.
func (s *Settled) ID() string { return s.id }

// Cancel does nothing: the run has ended.
func (s *Settled) Cancel() {}

// Dispose does nothing: there is no child.
func (s *Settled) Dispose() error { return nil }

// Member is what [Runs] needs of a provider's run: a comparable handle
// (a pointer) that ends, can be cancelled, and knows whether it was
// disposed. A type embedding *[Run] and defining Cancel is one.
type Member interface {
	comparable
	Ended() bool
	Disposed() bool
	Cancel()
}

// Runs is a child's bookkeeping of its runs: the run that runs or last ran
// a turn, how many runs still hold the child (the first one and each
// resumed one, until disposed), and whether the child is closed, which
// happens with the last release. Its zero value has no run and no holder.
// It is safe for concurrent use.
type Runs[R Member] struct {
	mu      sync.Mutex
	current R
	refs    int
	closed  bool
}

// Hold counts the child's first run as a holder.
func (rs *Runs[R]) Hold() {
	rs.mu.Lock()
	rs.refs++
	rs.mu.Unlock()
}

// Begin makes r the child's current run.
func (rs *Runs[R]) Begin(r R) {
	rs.mu.Lock()
	rs.current = r
	rs.mu.Unlock()
}

// Current returns the run that runs or last ran a turn, and false when no
// run began yet.
func (rs *Runs[R]) Current() (R, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var zero R
	return rs.current, rs.current != zero
}

// CancelCurrent is the editor's per-child cancel: it stops whatever the
// child is doing now.
func (rs *Runs[R]) CancelCurrent() {
	if r, ok := rs.Current(); ok {
		r.Cancel()
	}
}

// ErrEnded is what steering a run that has ended returns: its child may
// be resumed instead.
var ErrEnded error = &subagents.Error{Code: subagents.CodeRunFinished, Message: "the subagent run has ended; resume it instead"}

// Resume admits a new run that continues from, a run of this child: from
// must have ended and not been disposed, the child must be open, and no
// other run may be running. The new run then holds the child until it is
// released. Refusals are *subagents.Error values the caller returns as
// they are.
func (rs *Runs[R]) Resume(from R) error {
	if !from.Ended() {
		return &subagents.Error{Code: subagents.CodeInvalidRequest, Message: "the subagent run has not ended yet"}
	}
	disposed := from.Disposed()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if disposed || rs.closed {
		return &subagents.Error{Code: subagents.CodeRunFinished, Message: "the subagent run was disposed"}
	}
	var zero R
	if cur := rs.current; cur != zero && cur != from && !cur.Ended() {
		return &subagents.Error{Code: subagents.CodeInvalidRequest, Message: "the subagent is still running"}
	}
	rs.refs++
	return nil
}

// Release drops one holder. It reports whether that was the last one: the
// child is closed from then on, and the caller closes what it holds.
func (rs *Runs[R]) Release() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.refs--
	last := rs.refs == 0 && !rs.closed
	if last {
		rs.closed = true
	}
	return last
}
