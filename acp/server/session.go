// This file implements session/new, load, resume, close, list and delete.

package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"

	"github.com/dshd/dshd/acp/rpc"
)

// NewSession creates a session in cwd.
func (c *Conn) NewSession(ctx context.Context, req *acp.NewSessionRequest) (_ *acp.NewSessionResponse, err error) {
	if err := c.requireAuth(); err != nil {
		return nil, err
	}
	if err := c.srv.refuseWhileDraining(); err != nil {
		return nil, err
	}
	if c.keyMissing() {
		return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": c.keyHelp()})
	}
	if err := checkMeta(acp.MethodSessionNew, req.Meta); err != nil {
		return nil, err
	}
	id := "s_" + uuid.NewString()
	// A session on a checkout of its own works there (checkout.go). The
	// clone is its workspace in the store: one that is not created after
	// all does not keep it.
	dir, err := c.checkout(ctx, id, req.Meta)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		req.Cwd, req.AdditionalDirectories = dir, nil
		defer func() {
			if err != nil {
				c.removeCheckout(id)
			}
		}()
	}
	if err := c.checkDirs(req.Cwd, req.AdditionalDirectories); err != nil {
		return nil, err
	}
	depth, given := depthFromMeta(req.Meta)
	dirs := dedupe(req.AdditionalDirectories)
	stored, err := session.Create(c.srv.opts.Store, session.Meta{
		SessionID:             id,
		Cwd:                   req.Cwd,
		AdditionalDirectories: dirs,
		CreatedAt:             c.srv.opts.Now(),
		Depth:                 depth,
		MaxDepth:              given,
		Budget:                budgetFromMeta(req.Meta),
		Hidden:                depth > 0,
	}, session.State{Mode: string(c.srv.opts.Mode), Model: c.srv.opts.DefaultModel})
	if err != nil {
		return nil, notCreated(err)
	}
	s, err := c.open(ctx, acp.SessionID(id), stored, req.Cwd, dirs, req.McpServers, depth, c.depthLimit(given), nil)
	if err != nil {
		_ = c.srv.opts.Store.Delete(id)
		return nil, err
	}
	resp := &acp.NewSessionResponse{
		SessionID:     acp.SessionID(id),
		Modes:         c.modeState(s),
		ConfigOptions: c.configOptions(s),
	}
	if dir != "" {
		// The parent learns that the session is on the checkout it asked
		// for: an agent that does not answer so ignored it.
		resp.Meta = acp.Meta{metaCheckout: map[string]any{"cwd": dir}}
	}
	c.afterSetup(ctx, s, resp.ConfigOptions)
	return resp, nil
}

// afterSetup sends what follows a session's setup response: the daemon's
// setup warnings, MCP warnings, what became of an AGENTS.md that is cut
// or not used, and the usage state, written right after the response (the
// client learns the session id from it), and later the model selector
// again when the model list arrives after the response's options (sent).
func (c *Conn) afterSetup(ctx context.Context, s *session.Session, sent []acp.SessionConfigOption) {
	id := acp.SessionID(s.ID())
	ws := c.workspace(id)
	send := func() {
		if f := c.srv.opts.SetupWarnings; f != nil {
			for _, w := range f() {
				c.Warn(id, w)
			}
		}
		for _, w := range s.Warnings() {
			c.Warn(id, Warning{Title: w})
		}
		c.warnInstructions(s)
		if ws != nil {
			ws.checkTools(s)
			c.reportMistakes(s, ws.pending)
			ws.pending = nil
			c.send(nil, id, commandsUpdate(ws))
		}
		c.send(nil, id, &acp.UsageUpdate{Used: uint64(s.Agent().ContextUsed()), Size: uint64(s.Agent().ContextWindow())})
		c.watchModels(s, sent)
	}
	rpc.AfterReply(ctx, send)
}

// LoadSession reopens a session and replays its conversation before
// answering.
func (c *Conn) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	if err := checkMeta(acp.MethodSessionLoad, req.Meta); err != nil {
		return nil, err
	}
	s, updates, err := c.reopen(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers)
	if err != nil {
		return nil, err
	}
	c.replay(s, updates)
	resp := &acp.LoadSessionResponse{Modes: c.modeState(s), ConfigOptions: c.configOptions(s)}
	c.afterSetup(ctx, s, resp.ConfigOptions)
	return resp, nil
}

// ResumeSession reopens a session without replaying anything.
func (c *Conn) ResumeSession(ctx context.Context, req *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	if err := checkMeta(acp.MethodSessionResume, req.Meta); err != nil {
		return nil, err
	}
	s, _, err := c.reopen(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers)
	if err != nil {
		return nil, err
	}
	resp := &acp.ResumeSessionResponse{Modes: c.modeState(s), ConfigOptions: c.configOptions(s)}
	c.afterSetup(ctx, s, resp.ConfigOptions)
	return resp, nil
}

// reopen is the shared part of load and resume: it returns the live
// session and its recorded updates.
func (c *Conn) reopen(ctx context.Context, id acp.SessionID, cwd string, dirs []string, servers []acp.McpServer) (*session.Session, []json.RawMessage, error) {
	if err := c.requireAuth(); err != nil {
		return nil, nil, err
	}
	if err := c.srv.refuseWhileDraining(); err != nil {
		return nil, nil, err
	}
	if isChildID(id) {
		return nil, nil, childRefused(id)
	}
	if err := c.checkDirs(cwd, dirs); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	live := c.sessions[id]
	c.mu.Unlock()
	if live != nil {
		return c.reopenLive(live, cwd)
	}
	store := c.srv.opts.Store
	if !store.Exists(string(id)) {
		return nil, nil, notFound(id)
	}
	// The session is claimed before its files are touched: a load refused
	// because another connection holds it (or is loading it) changes
	// nothing on disk.
	if err := c.srv.reserve(id, c); err != nil {
		return nil, nil, err
	}
	s, stored, err := c.load(ctx, id, cwd, dedupe(dirs), servers)
	if err != nil {
		c.srv.release(id, c)
		return nil, nil, err
	}
	return s, c.endInterrupted(s, stored.Updates), nil
}

// load opens a claimed session's journal and builds the live session over
// it; only then are its new directories recorded.
func (c *Conn) load(ctx context.Context, id acp.SessionID, cwd string, dirs []string, servers []acp.McpServer) (*session.Session, *session.Stored, error) {
	store := c.srv.opts.Store
	stored, err := session.Load(store, string(id))
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, nil, notFound(id)
		}
		if errors.Is(err, session.ErrHeld) {
			return nil, nil, heldElsewhere(id)
		}
		return nil, nil, acp.ErrInternal.Errorf("opening the session: %v", err)
	}
	if stored.Meta.Cwd != "" && stored.Meta.Cwd != cwd {
		stored.Close()
		return nil, nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "does not match the session's cwd " + stored.Meta.Cwd})
	}
	s, err := c.open(ctx, id, stored, cwd, dirs, servers, stored.Meta.Depth, c.depthLimit(stored.Meta.MaxDepth), nil)
	if err != nil {
		return nil, nil, err
	}
	// A failure is kept and written later (see session.Store.Update).
	_ = store.Update(string(id), func(i *session.Info) { i.AdditionalDirectories = dirs })
	return s, stored, nil
}

// reopenLive is load and resume of a session already open on this
// connection, as clients that reload a thread send: the live session and
// what it has recorded so far, replayed again. Its MCP servers stay the
// ones it was opened with.
func (c *Conn) reopenLive(s *session.Session, cwd string) (*session.Session, []json.RawMessage, error) {
	if s.Cwd() != cwd {
		return nil, nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "does not match the session's cwd " + s.Cwd()})
	}
	updates, err := s.RecordedUpdates()
	if err != nil {
		return nil, nil, acp.ErrInternal.Errorf("reading the session: %v", err)
	}
	return s, updates, nil
}

// replay sends a session's recorded updates in their original order. A
// client that did not opt in to subagent sessions gets only the parent's
// own traffic, one that did not advertise session.compaction no
// compaction (see notReplayed).
func (c *Conn) replay(s *session.Session, updates []json.RawMessage) {
	id := acp.SessionID(s.ID())
	optedIn := c.optedIn()
	compaction := c.clientCaps().Session.Compaction != nil
	for _, raw := range updates {
		if notReplayed(raw, compaction) {
			continue
		}
		if !optedIn {
			var head struct {
				SessionID acp.SessionID   `json:"sessionId"`
				Update    json.RawMessage `json:"update"`
			}
			if json.Unmarshal(raw, &head) != nil || head.SessionID != id {
				continue
			}
			raw = stripSubagentTraffic(raw, head.Update)
			if raw == nil {
				continue
			}
		}
		c.sendRaw(raw)
	}
}

// CloseSession cancels the session's work, waits for it, and frees it.
func (c *Conn) CloseSession(ctx context.Context, req *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	s, err := c.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	delete(c.sessions, req.SessionID)
	c.mu.Unlock()
	// Waiting for the turn to end must not hold up later messages.
	rpc.Detach(ctx)
	s.CloseTasks()
	if err := closedUnsaved(c.closeSession(s)); err != nil {
		return nil, err
	}
	return &acp.CloseSessionResponse{}, nil
}

// ListSessions lists stored sessions, newest first, never subagent
// children.
func (c *Conn) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	if err := c.requireAuth(); err != nil {
		return nil, err
	}
	if req.Cwd != "" && !strings.HasPrefix(req.Cwd, "/") {
		return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "must be absolute"})
	}
	infos, next, err := c.srv.opts.Store.List(req.Cwd, req.Cursor, 0)
	if err != nil {
		if errors.Is(err, session.ErrInvalidCursor) {
			return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cursor", "reason": "invalid cursor"})
		}
		return nil, acp.ErrInternal.Errorf("listing sessions: %v", err)
	}
	resp := &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}, NextCursor: next}
	for _, in := range infos {
		si := acp.SessionInfo{SessionID: acp.SessionID(in.SessionID), Cwd: in.Cwd, Title: in.Title, AdditionalDirectories: in.AdditionalDirectories}
		if !in.UpdatedAt.IsZero() {
			si.UpdatedAt = in.UpdatedAt.UTC().Format(time.RFC3339)
		}
		resp.Sessions = append(resp.Sessions, si)
	}
	return resp, nil
}

// DeleteSession removes a session for good; unknown ids succeed quietly.
func (c *Conn) DeleteSession(ctx context.Context, req *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	if err := c.requireAuth(); err != nil {
		return nil, err
	}
	if isChildID(req.SessionID) {
		return nil, childRefused(req.SessionID)
	}
	c.mu.Lock()
	s, open := c.sessions[req.SessionID]
	delete(c.sessions, req.SessionID)
	c.mu.Unlock()
	if open {
		rpc.Detach(ctx) // waiting for the turn must not hold later messages
		s.CloseTasks()
		c.closeSession(s)
	}
	c.srv.mu.Lock()
	_, elsewhere := c.srv.live[req.SessionID]
	c.srv.mu.Unlock()
	if elsewhere {
		return nil, acp.ErrInvalidParams.WithData(map[string]any{"sessionId": req.SessionID, "reason": "the session is open on another connection"})
	}
	err := c.srv.opts.Store.Delete(string(req.SessionID))
	if errors.Is(err, session.ErrHeld) {
		return nil, heldElsewhere(req.SessionID)
	}
	if err != nil {
		return nil, acp.ErrInternal.Errorf("deleting the session: %v", err)
	}
	return &acp.DeleteSessionResponse{}, nil
}

// heldElsewhere is the error of a load or delete of a session another
// dshd process has open (the store's lock says so): two daemons writing
// one journal would write over each other's records.
func heldElsewhere(id acp.SessionID) error {
	return acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "the session is open in another dshd process"})
}
