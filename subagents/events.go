// This file defines the service's observe-only events and their detached,
// per-observer delivery.

package subagents

import (
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/agent/llm"
)

// EventKind names an [Event].
type EventKind string

// Event kinds.
const (
	// EventStart: a run started (after a successful provider Start).
	EventStart EventKind = "subagent/start"
	// EventEnd: a run settled. Fired exactly once per run.
	EventEnd EventKind = "subagent/end"
	// EventProviderAdded: a provider was registered.
	EventProviderAdded EventKind = "subagent/provider-added"
	// EventProviderRemoved: a provider was unregistered.
	EventProviderRemoved EventKind = "subagent/provider-removed"
)

// Event is what observers see. It is observe-only: nothing an observer
// does with it reaches a run or its caller.
type Event struct {
	Kind EventKind
	// Provider is the provider's name.
	Provider string
	// RunID is the run's id (start and end only). For an in-process run it
	// is the child agent's id, so a start observer can reach the live child
	// through the agent registry: the child stays registered until every
	// observer the start went to has seen it (see [Reachable]).
	RunID string
	// ParentSessionID is the session the run was started from (start and
	// end only).
	ParentSessionID string
	// StopReason is how the run ended (end only). A run that could not be
	// observed to the end reports StopError.
	StopReason StopReason
	// LastMessage is a deep copy, private to each observer, of the child's
	// last assistant message (end only). It is nil when the run failed at
	// the infrastructure level (its Wait returned an error) or the child
	// said nothing.
	LastMessage *llm.Message

	// hold keeps a start event's child reachable until every observer
	// it was queued for has seen it; nil for other events and for runs
	// that are not [Reachable].
	hold *startHold
}

// startHold is a [Reachable] run's hold, shared by the deliveries of its
// start event: one share per observer the event was queued for, and one
// for the publisher until every delivery is counted. The last share to go
// releases the run's hold.
type startHold struct {
	n       atomic.Int64
	release func()
}

func newStartHold(release func()) *startHold {
	h := &startHold{release: release}
	h.n.Store(1) // the publisher's share
	return h
}

func (h *startHold) add() {
	if h != nil {
		h.n.Add(1)
	}
}

// done gives up one share.
func (h *startHold) done() {
	if h != nil && h.n.Add(-1) == 0 {
		h.release()
	}
}

// observer is one Observe subscription with its own queue, so a slow or
// stuck observer delays only itself. Its goroutine exists only while
// events are queued.
type observer struct {
	fn    func(Event)
	log   *slog.Logger
	kinds []EventKind // what it observes; nil for everything

	mu      sync.Mutex
	queue   []Event // guarded by mu
	running bool    // a drain goroutine exists; guarded by mu
	stopped bool    // guarded by mu
}

// wants reports whether the observer subscribed to events of kind k.
func (o *observer) wants(k EventKind) bool {
	return len(o.kinds) == 0 || slices.Contains(o.kinds, k)
}

// push queues ev and makes sure a drain goroutine runs. Events are never
// dropped while the observer is subscribed; a queued start event holds its
// child until the observer has seen it.
func (o *observer) push(ev Event) {
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		return
	}
	ev.hold.add()
	o.queue = append(o.queue, ev)
	if o.running {
		o.mu.Unlock()
		return
	}
	o.running = true
	o.mu.Unlock()
	go o.drain()
}

func (o *observer) drain() {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 || o.stopped {
			o.queue = nil
			o.running = false
			o.mu.Unlock()
			return
		}
		ev := o.queue[0]
		o.queue[0] = Event{}
		o.queue = o.queue[1:]
		o.mu.Unlock()
		o.call(ev)
		ev.hold.done()
	}
}

// call runs the observer, containing a panic so it can neither crash the
// process nor stop later deliveries.
func (o *observer) call(ev Event) {
	defer func() {
		if v := recover(); v != nil {
			o.log.Error("subagent observer panicked", "event", string(ev.Kind), "provider", ev.Provider, "run", ev.RunID, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	o.fn(ev)
}

// stop drops what is queued, releasing the children its start events
// held; an event being delivered releases its own when the call returns.
func (o *observer) stop() {
	o.mu.Lock()
	o.stopped = true
	dropped := o.queue
	o.queue = nil
	o.mu.Unlock()
	for _, ev := range dropped {
		ev.hold.done()
	}
}

// forObserver returns ev with its own copy of LastMessage, so no observer
// can change what another observer, or the run's caller, holds.
func forObserver(ev Event) Event {
	if ev.LastMessage != nil {
		c := ev.LastMessage.Clone()
		ev.LastMessage = &c
	}
	return ev
}
