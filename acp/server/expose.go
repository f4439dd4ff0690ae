// This file shows subagent children to a client that opted in
// (clientCapabilities.subagents) as ACP subagent sessions
// (acp-subagents.md): announced with subagent_update on their immediate
// parent before any of their traffic, their events under their own id,
// their work state on the parent, and the task as session_message views.

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/subagents"
)

// child is an announced subagent session.
type child struct {
	id     acp.SessionID
	parent acp.SessionID    // immediate parent: a session or another child
	root   *session.Session // the client's session whose journal records it
	cancel func()           // nil: the client may not cancel it
	// stopped is set once a disk bound refused an update of this child's
	// run (see EmitRaw): nothing more of it is recorded or relayed.
	stopped atomic.Bool
}

// exposure implements subagents.Exposure for one client session tree.
type exposure struct {
	c    *Conn
	root *session.Session // set once the session is built, before any child
}

var _ subagents.Exposure = (*exposure)(nil)

func (c *Conn) child(id acp.SessionID) *child {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.children[id]
}

// Announce mints the child id under its parent and announces it on the
// parent's stream before anything else carries the id.
func (e *exposure) Announce(parent string, a subagents.Announcement) (string, error) {
	c := e.c
	pid := acp.SessionID(parent)
	c.mu.Lock()
	_, isSession := c.sessions[pid]
	_, isChild := c.children[pid]
	if !isSession && !isChild {
		c.mu.Unlock()
		return "", fmt.Errorf("server: cannot announce a child of unknown session %q", parent)
	}
	id := acp.SessionID(a.ID)
	if _, taken := c.children[id]; taken || a.ID == "" || !strings.HasPrefix(a.ID, parent+"/") {
		// A restored child keeps the id a replay showed, unless it is in
		// use or not under this parent.
		c.nextID++
		id = acp.SessionID(fmt.Sprintf("%s/sa%s%d", parent, c.idBase, c.nextID))
	}
	ch := &child{id: id, parent: pid, root: e.root, cancel: a.Cancel}
	c.children[id] = ch
	c.mu.Unlock()

	u := &acp.SubagentUpdate{SessionID: id, Title: acp.Set(a.Title)}
	if a.Description != "" {
		u.Description = acp.Set(a.Description)
	}
	caps := acp.SubagentSessionCapabilities{}
	if a.Cancel != nil {
		caps.Cancel = &acp.EmptyCapability{}
	}
	u.Capabilities = acp.Set(caps)
	if a.Cwd != "" {
		u.Cwd = acp.Set(a.Cwd)
	}
	c.send(e.root, pid, u)
	return string(id), nil
}

// Message writes the task as the outgoing view on the parent and the
// incoming view on the child.
func (e *exposure) Message(parent, childID, text string) {
	c := e.c
	n := c.mintID()
	out := acp.MessageID(fmt.Sprintf("mo_%d", n))
	in := acp.MessageID(fmt.Sprintf("mi_%d", n))
	// Both views name the same participants and content; each names the
	// other view's id.
	outgoing := acp.SessionMessage{
		SenderSessionID:    acp.Set(acp.SessionID(parent)),
		RecipientSessionID: acp.Set(acp.SessionID(childID)),
		Content:            acp.Set([]acp.ContentBlock{acp.TextBlock(text)}),
	}
	incoming := outgoing
	outgoing.MessageID, outgoing.RecipientMessageID = out, acp.Set(in)
	incoming.MessageID, incoming.SenderMessageID = in, acp.Set(out)
	c.send(e.root, acp.SessionID(parent), &outgoing)
	c.send(e.root, acp.SessionID(childID), &incoming)
}

// Emit sends one of the child's events on the child's stream.
func (e *exposure) Emit(childID string, ev agent.Event) {
	tr := &translator{c: e.c, journal: e.root, session: acp.SessionID(childID), optedIn: true}
	tr.emit(ev)
}

// EmitRaw relays an ACP update on the child's stream, once the root's
// journal recorded it. Another agent sends as many updates as it likes,
// so each is held to the disk bounds (session.RecordRelayed): past one,
// the run this daemon started for it (the child itself, or the ancestor
// a grandchild was relayed through) is cancelled, so that it does not
// work on unseen, and nothing more of it is recorded or relayed; the
// user is told once, naming the setting. The running turn stops with the
// bound (RecordRelayed), and its answer names it too.
func (e *exposure) EmitRaw(childID string, update json.RawMessage) {
	run := e.c.runOf(acp.SessionID(childID))
	if run != nil && run.stopped.Load() {
		return
	}
	params, err := json.Marshal(struct {
		SessionID acp.SessionID   `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}{acp.SessionID(childID), update})
	if err != nil {
		return
	}
	// Another failure to record stops the turn, whose answer says so.
	var le *session.LimitError
	if err := e.root.RecordRelayed(params); errors.As(err, &le) {
		e.stop(run, le)
		return
	}
	e.c.sendRaw(params)
}

// stop cancels run, a child of the root session whose updates a disk
// bound refused (le), and tells the user, once per run; nil is a child
// already forgotten, whose updates are dropped all the same.
func (e *exposure) stop(run *child, le *session.LimitError) {
	if run == nil || run.stopped.Swap(true) {
		return
	}
	if run.cancel != nil {
		run.cancel()
	}
	e.c.Warn(run.parent, Warning{
		Title:  "Subagent cancelled: its updates reached " + le.Setting,
		Detail: "nothing more of it is saved or shown: " + le.Error(),
	})
}

// runOf returns the child whose run this daemon started for the updates
// of child id: id itself when it is a child of a client session, else
// the ancestor through which the child's agent relays it. nil: id is no
// child (any more).
func (c *Conn) runOf(id acp.SessionID) *child {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.children[id]
	for ch != nil {
		up := c.children[ch.parent]
		if up == nil {
			return ch
		}
		ch = up
	}
	return nil
}

// State reports the child's work state on its parent's stream.
func (e *exposure) State(childID string, s subagents.State) {
	ch := e.c.child(acp.SessionID(childID))
	if ch == nil {
		return
	}
	e.c.childState(ch, stateUpdate(s))
}

// Forget drops the child's route.
func (e *exposure) Forget(childID string) {
	e.c.mu.Lock()
	delete(e.c.children, acp.SessionID(childID))
	e.c.mu.Unlock()
}

func (c *Conn) childState(ch *child, st acp.StateUpdate) {
	c.send(ch.root, ch.parent, &acp.SubagentUpdate{SessionID: ch.id, State: acp.Set(st)})
}

func stateRunning() acp.StateUpdate        { return &acp.RunningState{} }
func stateRequiresAction() acp.StateUpdate { return &acp.RequiresActionState{} }

// stateUpdate maps a seam state onto ACP's StateUpdate.
func stateUpdate(s subagents.State) acp.StateUpdate {
	switch s.State {
	case subagents.StateRunning:
		return stateRunning()
	case subagents.StateRequiresAction:
		return stateRequiresAction()
	case subagents.StateUnknown:
		return &acp.UnknownState{}
	}
	idle := &acp.IdleState{StopReason: stopReason(s.StopReason)}
	if s.StopReason == subagents.StopError {
		msg := s.Error
		if msg == "" {
			msg = "the subagent failed"
		}
		idle.Error = &acp.Error{Code: acp.ErrInternal.Code, Message: msg}
	}
	if s.Usage != nil {
		idle.Usage = usageOf(*s.Usage)
	}
	return idle
}

// stopReason maps a seam stop reason onto an ACP one.
func stopReason(r subagents.StopReason) acp.StopReason {
	switch r {
	case subagents.StopCompleted:
		return acp.StopReasonEndTurn
	case subagents.StopAborted:
		return acp.StopReasonCancelled
	case subagents.StopMaxTokens:
		return acp.StopReasonMaxTokens
	case subagents.StopRefusal:
		return acp.StopReasonRefusal
	}
	return acp.StopReasonError
}
