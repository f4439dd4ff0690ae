// This file routes the agent's session updates: to the run that collects
// its output, and, when the editor sees children, on to the editor with
// every agent-side session id rewritten to the editor's (acp-subagents.md
// §14). The agent's own children are re-announced under the child.

package acpprovider

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/subagents"
)

// heldBytesLimit is the most bytes of updates pr holds for unannounced ids.
func (pr *peer) heldBytesLimit() int {
	if n := pr.p.o.Limits.MaxQueuedInput; n > 0 {
		return n
	}
	return rpc.DefaultMaxQueuedInput
}

// route is one agent-side session id the provider knows: a child's own
// session, or one of the agent's children under it.
type route struct {
	c      *child
	down   acp.SessionID // the agent's id
	up     string        // the editor's id; "" when the editor does not see it
	parent *route        // nil for the child's own session
	// cancel records whether the agent lets this child of its own be
	// cancelled; the editor's cancel is forwarded only then.
	cancel atomic.Bool
	// replaying is set while session/load replays the conversation: it was
	// shown already.
	replaying atomic.Bool
}

// heldQueue is the updates of one session that wait for an id to become
// known, in arrival order.
type heldQueue struct {
	items    []heldUpdate
	flushing bool
}

type heldUpdate struct {
	n    *acp.SessionNotification
	at   time.Time
	size int // its size on the wire, about
}

// SessionUpdate implements acp.Client. It runs on the connection's
// dispatcher, in arrival order.
func (pr *peer) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	pr.mu.Lock()
	if q := pr.held[n.SessionID]; q != nil && !pr.announcesLocked(n) {
		pr.holdLocked(n)
		pr.mu.Unlock()
		pr.flush(n.SessionID)
		return nil
	}
	rt, ok := pr.deliverableLocked(n)
	if !ok {
		pr.holdLocked(n)
		pr.mu.Unlock()
		return nil
	}
	pr.mu.Unlock()
	pr.deliver(rt, n)
	return nil
}

// announcesLocked reports whether n announces a new child under a known
// session. An announcement is let past the updates held on that session:
// they may be waiting for exactly this id (an agent that named its child
// before announcing it). pr.mu is held.
func (pr *peer) announcesLocked(n *acp.SessionNotification) bool {
	u, ok := n.Update.(*acp.SubagentUpdate)
	if !ok {
		return false
	}
	rt := pr.routes[n.SessionID]
	_, known := pr.routes[u.SessionID]
	return rt != nil && rt.up != "" && !known
}

// deliverableLocked returns the route of n's session when n can be
// delivered now: its session is known and, when it is relayed, so is every
// other session it names. pr.mu is held.
func (pr *peer) deliverableLocked(n *acp.SessionNotification) (*route, bool) {
	rt := pr.routes[n.SessionID]
	if rt == nil {
		return nil, false
	}
	if rt.up == "" {
		return rt, true
	}
	known := func(id acp.SessionID) bool { _, ok := pr.routes[id]; return ok }
	switch u := n.Update.(type) {
	case *acp.SessionMessage:
		if id, ok := u.SenderSessionID.Get(); ok && !known(id) {
			return nil, false
		}
		if id, ok := u.RecipientSessionID.Get(); ok && !known(id) {
			return nil, false
		}
	case *acp.ToolCall:
		if !sessionItemsKnown(u.Content, known) {
			return nil, false
		}
	case *acp.ToolCallUpdate:
		if !sessionItemsKnown(u.Content, known) {
			return nil, false
		}
	}
	return rt, true
}

func sessionItemsKnown(items []acp.ToolCallContent, known func(acp.SessionID) bool) bool {
	for _, it := range items {
		if s, ok := it.(*acp.SessionReference); ok && !known(s.SessionID) {
			return false
		}
	}
	return true
}

// holdLocked queues n behind its session's held updates, unless the
// updates held already are at their bound: then n is dropped, and the
// first drop on the connection is logged, naming the setting that bound
// it. The bound is over all ids together (the agent chooses the ids, so a
// bound per id bounds nothing): at most MaxHeld updates, of at most the
// connection's MaxQueuedInput bytes (they are messages read and not yet
// handled). pr.mu is held.
func (pr *peer) holdLocked(n *acp.SessionNotification) {
	size := len(n.SessionID) + 64
	if raw, err := json.Marshal(n.Update); err == nil {
		size += len(raw)
	}
	most, limit := pr.p.o.MaxHeld, pr.heldBytesLimit()
	full := func() bool { return pr.nheld >= most || pr.heldBytes+size > limit }
	if full() {
		pr.expireLocked()
	}
	if full() {
		if !pr.heldFull {
			pr.heldFull = true
			setting := pr.p.o.Limits.Settings.MaxQueuedInput
			if pr.nheld >= most {
				setting = pr.p.o.Settings.MaxHeld
			}
			pr.log.Warn("holding no more updates for session ids the agent has not announced; dropping this one and the next",
				"session", n.SessionID, "update", n.Update.UpdateType(), "held", pr.nheld, "limit", most,
				"held_bytes", pr.heldBytes, "limit_bytes", limit, "setting", setting, "peer", pr.t.where())
		}
		return
	}
	q := pr.held[n.SessionID]
	if q == nil {
		q = &heldQueue{}
		pr.held[n.SessionID] = q
	}
	q.items = append(q.items, heldUpdate{n: n, at: time.Now(), size: size})
	pr.nheld++
	pr.heldBytes += size
}

// expireLocked drops the held updates that waited longer than
// HoldUnknown (a flush of their id would drop them), to make room. pr.mu
// is held.
func (pr *peer) expireLocked() {
	hold := pr.p.o.HoldUnknown
	// At most a sweep per quarter of the hold: a flood at the bound
	// costs no sweep per update.
	if time.Since(pr.sweptAt) < hold/4 {
		return
	}
	pr.sweptAt = time.Now()
	for id, q := range pr.held {
		if q.flushing {
			continue
		}
		k := 0
		for k < len(q.items) && time.Since(q.items[k].at) >= hold {
			k++
		}
		pr.unholdLocked(q, k)
		if len(q.items) == 0 {
			delete(pr.held, id)
		}
	}
}

// unholdLocked forgets the first k held updates of q. pr.mu is held.
func (pr *peer) unholdLocked(q *heldQueue, k int) {
	for _, h := range q.items[:k] {
		pr.heldBytes -= h.size
	}
	clear(q.items[:k])
	q.items = q.items[k:]
	pr.nheld -= k
}

// flush delivers what id's queue can deliver now, in order, dropping a
// head that waited longer than HoldUnknown. Only one flush per queue runs
// at a time; updates arriving meanwhile join the queue.
func (pr *peer) flush(id acp.SessionID) {
	hold := pr.p.o.HoldUnknown
	pr.mu.Lock()
	q := pr.held[id]
	if q == nil || q.flushing {
		pr.mu.Unlock()
		return
	}
	q.flushing = true
	for {
		if len(q.items) == 0 {
			delete(pr.held, id)
			pr.mu.Unlock()
			return
		}
		h := q.items[0]
		rt, ok := pr.deliverableLocked(h.n)
		if !ok {
			if time.Since(h.at) < hold {
				q.flushing = false
				pr.mu.Unlock()
				return
			}
			pr.log.Warn("dropping an update that names a session id the agent never announced", "session", id, "update", h.n.Update.UpdateType())
			pr.unholdLocked(q, 1)
			continue
		}
		pr.unholdLocked(q, 1)
		pr.mu.Unlock()
		pr.deliver(rt, h.n)
		pr.mu.Lock()
	}
}

// addRoute makes rt known and delivers what waited for it.
func (pr *peer) addRoute(rt *route) {
	pr.mu.Lock()
	pr.routes[rt.down] = rt
	close(pr.changed)
	pr.changed = make(chan struct{})
	ids := make([]acp.SessionID, 0, len(pr.held))
	for id := range pr.held {
		ids = append(ids, id)
	}
	pr.mu.Unlock()
	for _, id := range ids {
		pr.flush(id)
	}
}

// removeRoutes forgets routes and drops what was held for them.
func (pr *peer) removeRoutes(routes []*route) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, rt := range routes {
		if pr.routes[rt.down] == rt {
			delete(pr.routes, rt.down)
		}
		if q := pr.held[rt.down]; q != nil {
			pr.unholdLocked(q, len(q.items))
			delete(pr.held, rt.down)
		}
	}
}

// upID returns the editor's id for an agent-side id, or "".
func (pr *peer) upID(id acp.SessionID) acp.SessionID {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if rt := pr.routes[id]; rt != nil {
		return acp.SessionID(rt.up)
	}
	return ""
}

// deliver hands one update to the run collecting the child's output and,
// when the editor sees the child, relays it.
func (pr *peer) deliver(rt *route, n *acp.SessionNotification) {
	if rt.replaying.Load() {
		return
	}
	if rt.parent == nil {
		rt.c.observe(n.Update)
	}
	if rt.up == "" {
		return
	}
	pr.relay(rt, n.Update)
}

// relay sends one update on the editor's stream of rt, ids rewritten.
func (pr *peer) relay(rt *route, u acp.SessionUpdate) {
	switch u := u.(type) {
	case *acp.SubagentUpdate:
		pr.relaySubagent(rt, u)
		return
	case *acp.SessionInfoUpdate, *acp.AvailableCommandsUpdate, *acp.CurrentModeUpdate, *acp.ConfigOptionUpdate:
		// The controls of a session the editor cannot drive (§8).
		return
	case *acp.SessionMessage:
		if id, ok := u.SenderSessionID.Get(); ok {
			u.SenderSessionID = acp.Set(pr.upID(id))
		}
		if id, ok := u.RecipientSessionID.Get(); ok {
			u.RecipientSessionID = acp.Set(pr.upID(id))
		}
	case *acp.ToolCall:
		u.Content = pr.rewriteItems(u.Content)
	case *acp.ToolCallUpdate:
		u.Content = pr.rewriteItems(u.Content)
	}
	pr.emit(rt, u)
}

func (pr *peer) rewriteItems(items []acp.ToolCallContent) []acp.ToolCallContent {
	for i, it := range items {
		if s, ok := it.(*acp.SessionReference); ok {
			items[i] = &acp.SessionReference{SessionID: pr.upID(s.SessionID), Meta: s.Meta}
		}
	}
	return items
}

// emit writes u on rt's editor stream.
func (pr *peer) emit(rt *route, u acp.SessionUpdate) {
	raw, err := json.Marshal(u)
	if err != nil {
		pr.log.Warn("cannot relay an update", "update", u.UpdateType(), "err", err)
		return
	}
	rt.c.expose.EmitRaw(rt.up, raw)
}

// relaySubagent announces a child of the agent's under rt (minting the
// editor's id for it) or forwards a patch of one already announced.
func (pr *peer) relaySubagent(rt *route, u *acp.SubagentUpdate) {
	c := rt.c
	same := pr.sameHost()
	pr.mu.Lock()
	g := pr.routes[u.SessionID]
	pr.mu.Unlock()
	if g != nil {
		if g.parent != rt {
			// A child never moves to another parent (§3); ignore the claim.
			pr.log.Warn("agent announced a known session under another parent", "session", u.SessionID)
			return
		}
		if caps, ok := u.Capabilities.Get(); ok {
			g.cancel.Store(caps.Cancel != nil)
		} else if u.Capabilities.IsNull() {
			g.cancel.Store(false)
		}
		out := *u
		out.SessionID = acp.SessionID(g.up)
		if !same {
			out.Cwd, out.AdditionalDirectories = acp.Patch[string]{}, acp.Patch[[]string]{}
		}
		pr.emit(rt, &out)
		return
	}
	if u.SessionID == "" || u.SessionID == rt.down {
		return
	}
	g = &route{c: c, down: u.SessionID, parent: rt}
	granted := false
	if caps, ok := u.Capabilities.Get(); ok && caps.Cancel != nil {
		granted = true
	}
	g.cancel.Store(granted)
	a := subagents.Announcement{
		// The agent may grant cancel later; the editor's cancel is
		// forwarded only while it does.
		Cancel: func() { pr.cancelDown(g) },
	}
	a.Title, _ = u.Title.Get()
	a.Description, _ = u.Description.Get()
	if same {
		a.Cwd, _ = u.Cwd.Get()
	}
	up, err := c.expose.Announce(rt.up, a)
	if err != nil {
		pr.log.Warn("cannot announce the agent's child", "session", u.SessionID, "err", err)
		return
	}
	g.up = up
	c.track(g)
	pr.addRoute(g)
	// What the announcement did not carry: the real cancel grant, the
	// state, the directories and _meta.
	rest := &acp.SubagentUpdate{SessionID: acp.SessionID(up), State: u.State, Meta: u.Meta}
	if !granted {
		rest.Capabilities = acp.Set(acp.SubagentSessionCapabilities{})
	}
	if same {
		rest.AdditionalDirectories = u.AdditionalDirectories
	}
	if !rest.Capabilities.IsOmitted() || !rest.State.IsOmitted() || !rest.Meta.IsOmitted() || !rest.AdditionalDirectories.IsOmitted() {
		pr.emit(rt, rest)
	}
}

// cancelDown forwards the editor's cancel of an agent's child while the
// agent grants it.
func (pr *peer) cancelDown(g *route) {
	if !g.cancel.Load() {
		return
	}
	if err := pr.conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: g.down}); err != nil {
		pr.log.Debug("session/cancel not sent", "session", g.down, "err", err)
	}
}

// lostRoutes tells the editor that the agent's children under the routes
// can no longer be observed (their feed was lost, §4 unknown).
func (pr *peer) lostRoutes(routes []*route) {
	for _, g := range slices.Backward(routes) {
		if g.parent != nil && g.up != "" {
			g.c.expose.State(g.up, subagents.State{State: subagents.StateUnknown})
		}
	}
}
