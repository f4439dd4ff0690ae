// This file implements a child and its runs: the turn goroutine, Cancel,
// Dispose, and the runtime capabilities (steering, resume).

package inproc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// child is one child agent. Several runs may use it in turn (Resume); it
// is closed when the last of them is disposed.
type child struct {
	p                *Provider
	id               string
	parent           *subagents.Scope
	expose           subagents.Exposure
	session          string // the editor's id for the child; "" when not exposed
	schema           *jsonschema.Resolved
	schemaRaw        json.RawMessage
	progressInterval time.Duration
	// activity receives what the child does in every run (nil: nobody).
	activity func(subagents.Activity)
	log      *slog.Logger
	sess     *session.Session
	agent    *agent.Agent  // sess's
	meter    *budget.Meter // what the child and its descendants spent

	runs runkit.Runs[*run]

	// The child stays in the agent registry (its session open) while a
	// start observer has yet to see one of its runs: see hold.
	reachMu    sync.Mutex
	holds      int  // guarded by reachMu
	closeWaits bool // released, closing once holds is zero; guarded by reachMu
}

// turnStarting is called at the start of each of the child's turns, once
// the turn is running, which makes it the moment queued steering messages
// can be handed over.
func (c *child) turnStarting() {
	if r, ok := c.runs.Current(); ok {
		r.markStarted()
	}
}

// release drops one run's hold on the child and closes the child with the
// last one: at once, or when the last start observer holding it lets go.
func (c *child) release() {
	if !c.runs.Release() {
		return
	}
	if c.expose != nil {
		c.expose.Forget(c.session)
	}
	c.reachMu.Lock()
	held := c.holds > 0
	c.closeWaits = held
	c.reachMu.Unlock()
	if !held {
		c.sess.Close()
	}
}

// hold keeps the child's session open, and so its agent in the registry,
// until release is called, even if every run lets go of it first. The
// child's turns have ended by then (Dispose waits for them), so closing it
// late only keeps it listed a little longer.
func (c *child) hold() (release func()) {
	c.reachMu.Lock()
	c.holds++
	c.reachMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.reachMu.Lock()
			c.holds--
			last := c.holds == 0 && c.closeWaits
			if last {
				c.closeWaits = false
			}
			c.reachMu.Unlock()
			if last {
				c.sess.Close()
			}
		})
	}
}

// run is one turn of a child.
type run struct {
	*runkit.Run // its end, Wait and the once-only part of Dispose

	c        *child
	ctx      context.Context
	cancel   context.CancelFunc
	input    string
	progress *progressSink // nil when exposed or nobody listens

	cancelled atomic.Bool
	// schemaErr is why the last answer did not match the output schema;
	// written and read by the turn goroutine only.
	schemaErr error

	mu       sync.Mutex
	launched bool     // the turn was launched, or can no longer be; guarded by mu
	started  bool     // the turn is running; guarded by mu
	pending  []string // steering sent before it was; guarded by mu

	// before is the child's usage when the turn was launched. Written
	// once before the turn and read by it.
	before llm.Usage
	// Written only from emit, which the agent serialises, and read after
	// the turn ended.
	msgID   string
	curText []byte
	prevTxt []byte
}

var (
	_ subagents.Run       = (*run)(nil)
	_ subagents.Steerable = (*run)(nil)
	_ subagents.Resumable = (*run)(nil)
	_ subagents.Settling  = (*run)(nil)
	_ subagents.Reachable = (*run)(nil)
	_ subagents.Durable   = (*run)(nil)
)

// newRun prepares a run of c. Its context is detached from ctx's
// cancellation: the run belongs to its owner, who ends it with Cancel or
// Dispose.
func (c *child) newRun(ctx context.Context, input string, progress func(subagents.Progress)) *run {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &run{Run: runkit.NewRun(), c: c, ctx: rctx, cancel: cancel, input: input}
	if c.expose == nil && progress != nil {
		r.progress = newProgressSink(progress, c.progressInterval)
	}
	return r
}

// begin makes r the child's current run and marks it running for the
// editor. Its turn is launched by the owner's first Wait.
func (r *run) begin() {
	c := r.c
	c.runs.Begin(r)
	if c.expose != nil {
		c.expose.State(c.session, subagents.State{State: subagents.StateRunning})
	}
}

// launch starts the turn, once. The turn begins when the run's owner first
// waits for it, not in Start: Start returns to a caller that may cancel at
// once, and a turn already under way could finish before that Cancel —
// while one not yet launched never runs (Cancel settles it instead).
func (r *run) launch() {
	r.mu.Lock()
	first := !r.launched
	r.launched = true
	r.mu.Unlock()
	if first {
		r.before = r.c.meter.Usage()
		go func() { r.end(r.turn()) }()
	}
}

// end publishes the run's end: the idle state (exposed) or the final
// progress (fallback) goes out before Wait can return.
func (r *run) end(res subagents.Result) {
	if c := r.c; c.expose != nil {
		c.expose.State(c.session, runkit.IdleState(res))
	}
	if r.progress != nil {
		r.progress.finish()
	}
	r.Finish(res)
}

// Wait launches the turn the first time and returns its result once it
// ended.
func (r *run) Wait(ctx context.Context) (subagents.Result, error) {
	r.launch()
	return r.Run.Wait(ctx)
}

func (r *run) turn() (res subagents.Result) {
	defer func() {
		if v := recover(); v != nil {
			r.c.log.Error("subagent child panicked", "panic", v, "stack", string(debug.Stack()))
			res = r.failure(errCrashed)
		}
	}()
	ar, err := r.c.agent.Prompt(r.ctx, agent.Input{Text: r.input}, r.emit)
	if err != nil {
		return r.failure(err)
	}
	res = r.outcome(ar)
	if r.schemaErr == nil || r.cancelled.Load() {
		return res
	}
	// One corrective turn: the child is told what is wrong with its
	// answer and asked for it again.
	first := res.Usage
	correction := runkit.Correction(r.schemaErr)
	r.schemaErr = nil
	r.curText, r.prevTxt, r.msgID = nil, nil, ""
	c := r.c
	c.log.Debug("the answer does not match the output schema; one corrective turn")
	if c.expose != nil {
		c.expose.Message(c.parent.SessionID, c.session, correction)
	}
	ar, err = c.agent.Prompt(r.ctx, agent.Input{Text: correction}, r.emit)
	if err != nil {
		return r.failure(err)
	}
	res = r.outcome(ar)
	res.Usage.Add(first)
	if r.schemaErr != nil {
		res.Diagnostic = cut("the child's final answer does not match the output schema, also after it was told why: "+r.schemaErr.Error(), maxDiagnostic)
	}
	return res
}

// emit receives the child's events in order.
func (r *run) emit(ev agent.Event) {
	switch e := ev.(type) {
	case agent.MessageChunk:
		if e.MessageID != r.msgID {
			if len(r.curText) > 0 {
				r.prevTxt = r.curText
			}
			r.msgID, r.curText = e.MessageID, nil
		}
		r.curText = append(r.curText, e.Text...)
	}
	if r.c.activity != nil {
		r.activity(ev)
	}
	if c := r.c; c.expose != nil {
		c.expose.Emit(c.session, ev)
		return
	}
	if r.progress != nil {
		r.progress.observe(ev)
	}
}

// activity reports ev to the child's activity sink.
func (r *run) activity(ev agent.Event) {
	switch e := ev.(type) {
	case agent.MessageChunk:
		r.c.activity(subagents.Activity{Text: e.Text, NewMessage: len(r.curText) == len(e.Text)})
	case agent.ToolCallStarted:
		title := e.Title
		if title == "" {
			title = e.Name
		}
		r.c.activity(subagents.Activity{Tool: title})
	case agent.UsageUpdated:
		u := e.Call
		r.c.activity(subagents.Activity{Usage: &u})
	}
}

// Snapshot is what Restore needs to rebuild the child: its conversation
// and the editor's id for it.
func (r *run) Snapshot() (json.RawMessage, error) {
	return json.Marshal(snapshot{Messages: r.c.agent.History().Messages(), Session: r.c.session})
}

// partial is the text of the child's last message that has any, for a
// turn that ended without a result.
func (r *run) partial() string {
	if len(r.curText) > 0 {
		return string(r.curText)
	}
	return string(r.prevTxt)
}

func (r *run) markStarted() {
	r.mu.Lock()
	r.started = true
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, text := range pending {
		if err := r.c.agent.Steer(text); err != nil {
			r.c.log.Warn("steering message lost", "err", err)
		}
	}
}

// ID returns the child agent's id, which the agent registry lists while
// the child is alive.
func (r *run) ID() string { return r.c.id }

// Cancel stops the child's turn and, through its context, every
// descendant; the run ends aborted. A run whose turn was not launched yet
// settles aborted at once, without running it.
func (r *run) Cancel() {
	r.mu.Lock()
	r.cancelled.Store(true)
	unlaunched := !r.launched
	r.launched = true
	r.mu.Unlock()
	r.cancel()
	if unlaunched {
		r.end(subagents.Result{StopReason: subagents.StopAborted, ChildSessionID: r.c.session})
	}
}

// HoldReachable keeps the child in the agent registry until release, for
// the service's start observers.
func (r *run) HoldReachable() (release func()) { return r.c.hold() }

// Dispose cancels what remains, waits until the turn and everything it
// started have ended, and closes the child unless a resumed run still
// holds it. It is idempotent.
func (r *run) Dispose() error {
	r.DisposeOnce(r.Cancel, func() {
		r.cancel()
		r.c.release()
	})
	return nil
}

// SendMessage steers the running child: the model sees text before its
// next call. A message sent before the turn started is handed over as soon
// as it does.
func (r *run) SendMessage(_ context.Context, text string) error {
	if r.Ended() {
		return runkit.ErrEnded
	}
	r.mu.Lock()
	if !r.started {
		r.pending = append(r.pending, text)
		r.mu.Unlock()
	} else {
		r.mu.Unlock()
		if err := r.c.agent.Steer(text); err != nil {
			if errors.Is(err, agent.ErrNotRunning) {
				return runkit.ErrEnded
			}
			return err
		}
	}
	if c := r.c; c.expose != nil {
		c.expose.Message(c.parent.SessionID, c.session, text)
	}
	return nil
}

// Resume continues the finished child's conversation with prompt: a new
// run on the same child agent and, when exposed, the same child session,
// which goes running and idle again. r must have ended and not been
// disposed.
func (r *run) Resume(ctx context.Context, prompt string) (subagents.Run, error) {
	c := r.c
	if err := c.runs.Resume(r); err != nil {
		return nil, err
	}
	input := prompt
	if len(c.schemaRaw) > 0 {
		input = childInput("", subagents.StartRequest{Prompt: prompt, OutputSchema: c.schemaRaw})
	}
	next := c.newRun(ctx, input, nil)
	if c.expose != nil {
		c.expose.Message(c.parent.SessionID, c.session, prompt)
	}
	next.begin()
	return next, nil
}

var errCrashed = errors.New("the child crashed")
