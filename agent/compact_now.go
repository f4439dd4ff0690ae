// This file compacts a conversation on request (the /compact command),
// whatever its size.

package agent

import (
	"context"
	"errors"

	"github.com/dshd/dshd/agent/llm"
)

// ErrNothingToCompact is Compact's error for a conversation with no
// completed turn.
var ErrNothingToCompact = errors.New("agent: there is no conversation to compact yet")

// Compact replaces the whole conversation with the model's summary of it,
// now, as the automatic compaction does when the context is nearly full.
// focus, when not empty, tells the summariser what the summary must keep.
// It fails with [ErrBusy] while a turn runs and leaves the conversation
// as it was on any error, a budget that ran out (an
// [*budget.ExhaustedError]) included. The summary's usage is returned.
// emit, when set, gets the compaction's start and end as a turn's emit
// would.
func (a *Agent) Compact(ctx context.Context, focus string, emit func(Event)) (llm.Usage, error) {
	if !a.running.CompareAndSwap(false, true) {
		return llm.Usage{}, ErrBusy
	}
	defer a.running.Store(false)
	a.mu.Lock()
	older := a.hist.Messages()
	a.mu.Unlock()
	if len(older) == 0 {
		return llm.Usage{}, ErrNothingToCompact
	}
	if emit == nil {
		emit = func(Event) {}
	}
	t := &turn{a: a, ctx: ctx, emit: emit, meter: a.meter.Child(a.opts.TurnLimits)}
	if err := t.meter.Begin(); err != nil {
		return llm.Usage{}, err
	}
	id := a.newID("cmp")
	t.emit(CompactionStarted{ID: id})
	prompt := a.opts.CompactPrompt
	if focus != "" {
		prompt += "\n\nThe user asked that the summary keep: " + focus
	}
	summary, err := t.summariseWith(older, prompt)
	if err != nil {
		t.emit(CompactionEnded{ID: id, Failure: err.Error(), Cancelled: ctx.Err() != nil})
		return t.meter.Usage(), err
	}
	t.emit(CompactionEnded{ID: id, Summary: summary})
	kept := []llm.Message{{Role: llm.RoleUser, Content: "Summary of the earlier conversation (it was compacted on request):\n\n" + summary}}
	a.mu.Lock()
	a.hist = NewHistory(kept...)
	a.lastUsed = 0
	a.mu.Unlock()
	a.log.Info("conversation compacted on request", "messages_before", len(older), "messages_after", len(kept))
	if a.opts.OnReset != nil {
		a.opts.OnReset(append([]llm.Message(nil), kept...))
	}
	return t.meter.Usage(), nil
}
