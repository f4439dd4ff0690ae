// This file holds a recording Exposure: what an editor that opted in to
// subagent sessions would have been sent, in order.

package subagenttest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/subagents"
)

// Exposure records every call as a line, in order. Child ids are minted as
// "<parent>/sa<N>", as acp/server does.
type Exposure struct {
	// AnnounceErr, when set, fails every Announce.
	AnnounceErr error
	// OnState, when set, is called after each State is recorded.
	OnState func(child string, s subagents.State)

	mu            sync.Mutex
	seq           int
	lines         []string
	announcements map[string]subagents.Announcement
	events        map[string][]agent.Event
	states        map[string][]subagents.State
}

var _ subagents.Exposure = (*Exposure)(nil)

func (e *Exposure) record(line string) {
	e.lines = append(e.lines, line)
}

// Announce implements [subagents.Exposure].
func (e *Exposure) Announce(parent string, a subagents.Announcement) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.AnnounceErr != nil {
		return "", e.AnnounceErr
	}
	e.seq++
	child := parent + "/sa" + strconv.Itoa(e.seq)
	if e.announcements == nil {
		e.announcements = make(map[string]subagents.Announcement)
	}
	e.announcements[child] = a
	e.record(fmt.Sprintf("announce %s on %s", child, parent))
	return child, nil
}

// Message implements [subagents.Exposure].
func (e *Exposure) Message(parent, child, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record(fmt.Sprintf("message %s -> %s: %s", parent, child, text))
}

// Emit implements [subagents.Exposure].
func (e *Exposure) Emit(child string, ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.events == nil {
		e.events = make(map[string][]agent.Event)
	}
	e.events[child] = append(e.events[child], ev)
	e.record(fmt.Sprintf("emit %s %T", child, ev))
}

// EmitRaw implements [subagents.Exposure].
func (e *Exposure) EmitRaw(child string, update json.RawMessage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record(fmt.Sprintf("emitraw %s %s", child, update))
}

// State implements [subagents.Exposure].
func (e *Exposure) State(child string, s subagents.State) {
	e.mu.Lock()
	if e.states == nil {
		e.states = make(map[string][]subagents.State)
	}
	e.states[child] = append(e.states[child], s)
	line := fmt.Sprintf("state %s %s", child, s.State)
	if s.StopReason != "" {
		line += " " + string(s.StopReason)
	}
	e.record(line)
	on := e.OnState
	e.mu.Unlock()
	if on != nil {
		on(child, s)
	}
}

// Forget implements [subagents.Exposure].
func (e *Exposure) Forget(child string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record("forget " + child)
}

// Lines returns the recorded calls so far.
func (e *Exposure) Lines() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

// Announcement returns what child was announced with.
func (e *Exposure) Announcement(child string) (subagents.Announcement, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.announcements[child]
	return a, ok
}

// Events returns the agent events emitted for child.
func (e *Exposure) Events(child string) []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.events[child]...)
}

// States returns the states reported for child.
func (e *Exposure) States(child string) []subagents.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]subagents.State(nil), e.states[child]...)
}
