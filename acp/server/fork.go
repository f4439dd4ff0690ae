// This file implements the unstable session/fork (rfd:session-fork): a
// new session that starts from an existing session's history, with a
// journal of its own.

package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
)

// forkSource is what a fork starts from.
type forkSource struct {
	meta  session.Meta
	state session.State
	// hist is the conversation; when the source is open on this
	// connection it shares the live agent's storage (O(1), the fork
	// provider's History prefix).
	hist agent.History
	// updates are the source's recorded updates, as a load replays them.
	updates []json.RawMessage
}

// ForkSession starts a new session from the history of an existing one:
// open on this connection (its completed turns, shared with the live
// agent), or stored and open nowhere (read from its journal). The fork
// gets its own journal, which holds a copy of the conversation and of the
// source's own updates, so a load of the fork replays them and neither
// session's later turns reach the other. A source with a turn in progress
// or open on another connection is refused (-32602), as the RFD allows.
//
// The handler stays on the dispatcher: no prompt of this connection can
// start on the source while it copies.
func (c *Conn) ForkSession(ctx context.Context, req *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	if err := c.requireAuth(); err != nil {
		return nil, err
	}
	if c.keyMissing() {
		return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": c.keyHelp()})
	}
	if isChildID(req.SessionID) {
		return nil, childRefused(req.SessionID)
	}
	if err := checkMeta(acp.MethodSessionFork, req.Meta); err != nil {
		return nil, err
	}
	if err := c.checkDirs(req.Cwd, req.AdditionalDirectories); err != nil {
		return nil, err
	}
	src, err := c.forkSource(req.SessionID)
	if err != nil {
		return nil, err
	}

	id := acp.SessionID("s_" + uuid.NewString())
	dirs := dedupe(req.AdditionalDirectories)
	meta := session.Meta{
		SessionID:             string(id),
		Cwd:                   req.Cwd,
		AdditionalDirectories: dirs,
		CreatedAt:             c.srv.opts.Now(),
		Depth:                 src.meta.Depth,
		MaxDepth:              src.meta.MaxDepth,
		// A fork is bound by what a parent gave its source, as a load of
		// the source is: forking is no way out of a budget.
		Budget: src.meta.Budget,
		Hidden: src.meta.Hidden,
	}
	// The fork takes the source's mode, model and thinking; it titles
	// itself from its own first prompt.
	state := src.state
	state.Title = ""
	stored, err := session.CreateFork(c.srv.opts.Store, meta, state, src.hist.Messages(), forkUpdates(req.SessionID, id, src.updates))
	if err != nil {
		return nil, storeRefused("The session was not forked", req.SessionID, err)
	}
	s, err := c.open(ctx, id, stored, req.Cwd, dirs, req.McpServers, meta.Depth, c.depthLimit(meta.MaxDepth), &src.hist)
	if err != nil {
		_ = c.srv.opts.Store.Delete(string(id))
		return nil, err
	}
	resp := &acp.ForkSessionResponse{SessionID: id, Modes: c.modeState(s), ConfigOptions: c.configOptions(s)}
	c.afterSetup(ctx, s, resp.ConfigOptions)
	return resp, nil
}

// forkSource reads the session a fork starts from.
func (c *Conn) forkSource(id acp.SessionID) (*forkSource, error) {
	store := c.srv.opts.Store
	if !store.Exists(string(id)) {
		return nil, notFound(id)
	}
	c.mu.Lock()
	live := c.sessions[id]
	c.mu.Unlock()
	if live != nil {
		if live.Running() != nil {
			return nil, acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "the session has a turn in progress; fork it once the turn has ended"})
		}
		ld, err := session.Read(store, string(id))
		if err != nil {
			return nil, readError(id, err)
		}
		st := session.State{Mode: string(live.Mode()), Model: live.Agent().ModelID(), Thinking: session.ThinkingValue(live.Thinking())}
		return &forkSource{meta: ld.Meta, state: st, hist: live.Agent().CompletedHistory(), updates: ld.Updates}, nil
	}
	// Open nowhere: hold it while it is read, so that no connection loads
	// or deletes it meanwhile.
	if err := c.srv.reserve(id, c); err != nil {
		return nil, err
	}
	defer c.srv.release(id, c)
	ld, err := session.Read(store, string(id))
	if err != nil {
		return nil, readError(id, err)
	}
	return &forkSource{meta: ld.Meta, state: ld.State, hist: agent.NewHistory(ld.Messages...), updates: ld.Updates}, nil
}

func readError(id acp.SessionID, err error) error {
	if errors.Is(err, session.ErrNotFound) {
		return notFound(id)
	}
	return acp.ErrInternal.Errorf("reading the session: %v", err)
}

// forkUpdates are the updates a load of the fork replays: the source's
// own traffic under the fork's id, without its subagents' (their ids
// belong to the source) and without recorded config option updates
// (never replayed).
func forkUpdates(from, to acp.SessionID, updates []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(updates))
	for _, raw := range updates {
		var n struct {
			SessionID acp.SessionID   `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}
		if json.Unmarshal(raw, &n) != nil || n.SessionID != from || notReplayed(raw, true) {
			continue
		}
		kept := stripSubagentTraffic(raw, n.Update)
		if kept == nil {
			continue
		}
		if json.Unmarshal(kept, &n) != nil {
			continue
		}
		n.SessionID = to
		b, err := json.Marshal(&n)
		if err != nil {
			continue
		}
		out = append(out, b)
	}
	return out
}
