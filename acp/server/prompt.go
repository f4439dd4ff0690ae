// This file implements session/prompt and session/cancel.

package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"

	"github.com/dshd/dshd/acp/rpc"
)

// Prompt runs one turn. It registers the turn, detaches from the
// dispatcher, runs the session's turn with its events translated into
// session/update, and answers only after every update of the turn was
// written.
func (c *Conn) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	s, err := c.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	in, err := c.input(req.Prompt)
	if err != nil {
		return nil, err
	}
	if !c.holdTurn() {
		return nil, notFound(req.SessionID)
	}
	defer c.turns.Done()
	if err := c.srv.beginTurn(); err != nil {
		return nil, err
	}
	// The turn runs until its answer is on the wire, so that a drain
	// waiting for the turns closes no connection before the answer.
	rpc.AfterAnswer(ctx, c.srv.endTurn)
	turn, err := s.BeginTurn(c.ctx)
	if err != nil {
		var ns *session.NotSavedError
		switch {
		case errors.Is(err, session.ErrBusy):
			return nil, acp.ErrInvalidParams.WithData(map[string]any{"sessionId": req.SessionID, "reason": "turn already in progress"})
		case errors.As(err, &ns):
			return nil, notSavedError(ns, false)
		}
		if le := limitError("The prompt was not run", req.SessionID, err); le != nil {
			return nil, le
		}
		return nil, notFound(req.SessionID)
	}
	// Whoever waits for this turn (session/close, shutdown) resumes only
	// once the prompt's answer is on the wire.
	rpc.AfterAnswer(ctx, turn.Finish)
	// $/cancel_request on this prompt cancels the turn like session/cancel.
	stop := context.AfterFunc(ctx, turn.Cancel)
	defer stop()
	rpc.Detach(ctx)

	id := req.SessionID
	c.recordPrompt(s, req.Prompt)
	if title := s.TitleFromPrompt(in.Text); title != "" {
		c.send(s, id, &acp.SessionInfoUpdate{Title: acp.Set(title), UpdatedAt: acp.Set(c.srv.opts.Now().UTC().Format(time.RFC3339))})
	}

	ws := c.workspace(id)
	c.refreshWorkspace(s, ws)
	in, command := slashCommand(ws, in)
	tr := &translator{c: c, journal: s, session: id, optedIn: c.optedIn()}
	began := time.Now()
	var res agent.Result
	if command != nil {
		// A command that acts on the session is the turn's work; what it
		// says is the agent's message.
		say := func(text string) { c.send(s, id, &acp.AgentMessageChunk{Content: acp.TextBlock(text)}) }
		res, err = turn.Do(func(ctx context.Context, _ *agent.Agent) (agent.Result, error) { return command(ctx, s, say, tr.emit) })
	} else {
		res, err = turn.Run(in, tr.emit)
	}
	c.srv.observer().TurnEnded(string(res.StopReason), time.Since(began), err)
	if err != nil {
		c.log.Warn("turn failed", "session", id, "err", err)
		var ns *session.NotSavedError
		if errors.As(err, &ns) {
			return nil, notSavedError(ns, true)
		}
		if le := limitError("The turn was stopped", id, err); le != nil {
			return nil, le // a subagent's updates reached a disk bound
		}
		return nil, turnError(err)
	}
	return &acp.PromptResponse{StopReason: acp.StopReason(res.StopReason), Usage: turnUsage(res)}, nil
}

// notSavedError is the JSON-RPC error of a prompt whose turn could not be
// saved (ran), or that was not run because the session cannot save
// (!ran): acknowledged means durable, so such a prompt never answers a
// stop reason. data.saved says whether the session saves again.
func notSavedError(ns *session.NotSavedError, ran bool) error {
	if !ran {
		return unsavedError("The prompt was not run", ns)
	}
	cause := ns.Err.Error()
	var msg string
	switch {
	case errors.Is(ns.Err, session.ErrJournalGone):
		msg = "The turn was not saved: " + cause + "; nothing more of this session can be saved, start a new one"
	case ns.Lost:
		msg = "The turn was not saved: " + cannotSave(ns)
	case ns.Recovered:
		msg = "The turn was stopped because it could not be saved (" + cause + "); the session saves again, what the turn did so far is saved"
	default:
		msg = "The turn was not saved: " + cause + "; the session refuses new prompts until it can save again"
	}
	return &acp.Error{Code: acp.ErrInternal.Code, Message: msg, Data: map[string]any{"reason": cause, "saved": ns.Recovered}}
}

// limitError is the JSON-RPC error of a prompt, a new session or a fork
// refused by a bound of the store's disk use (what says which), when err
// is one; nothing was run or recorded. data names the bound, its value and
// the session asked for (id: the prompted one, a fork's source; none for a
// new session), with the free bytes for the free-space bound and the
// bytes the sessions hold for the bound of them all.
func limitError(what string, id acp.SessionID, err error) error {
	var le *session.LimitError
	if !errors.As(err, &le) {
		return nil
	}
	data := map[string]any{"reason": le.Error(), "setting": le.Setting, "limit": le.Limit}
	if id != "" {
		data["sessionId"] = id
	}
	if le.Dir != "" {
		data["dir"], data["free"] = le.Dir, le.Free
	}
	if le.Sessions != "" {
		data["dir"], data["bytes"] = le.Sessions, le.Held
	}
	return &acp.Error{Code: acp.ErrInternal.Code, Message: what + ": " + le.Error(), Data: data}
}

// turnError is the JSON-RPC error for a failed turn: a clear message, the
// backend's HTTP status when there is one.
func turnError(err error) error {
	data := map[string]any{"reason": err.Error()}
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) && apiErr.Status != 0 {
		data["status"] = apiErr.Status
	}
	return &acp.Error{Code: acp.ErrInternal.Code, Message: "The turn failed: " + firstLine(err.Error()), Data: data}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Cancel cancels a session's running turn, or an exposed child's work when
// the child grants cancel. Unknown sessions are ignored (notifications get
// no answer).
func (c *Conn) Cancel(ctx context.Context, n *acp.CancelNotification) error {
	c.mu.Lock()
	s, ok := c.sessions[n.SessionID]
	ch := c.children[n.SessionID]
	authed := c.authed
	c.mu.Unlock()
	if !authed {
		return nil
	}
	switch {
	case ok:
		s.Cancel()
	case ch != nil && ch.cancel != nil:
		ch.cancel()
	default:
		c.log.Debug("session/cancel for an unknown or uncancellable session", "session", n.SessionID)
	}
	return nil
}

// recordPrompt journals the user's prompt as user_message_chunk updates,
// so a load replays it; they are not sent during the live turn.
func (c *Conn) recordPrompt(s *session.Session, blocks []acp.ContentBlock) {
	id := acp.SessionID(s.ID())
	msgID := acp.MessageID("u_" + s.ID() + "_" + strconv.FormatInt(c.srv.opts.Now().UnixNano(), 10))
	for _, b := range blocks {
		n := &acp.SessionNotification{SessionID: id, Update: &acp.UserMessageChunk{Content: b, MessageID: msgID}}
		if raw, err := marshalNotification(n); err == nil {
			_ = s.RecordUpdate(raw) // a failure stops the turn, whose answer says so
		}
	}
}

// input turns prompt blocks into the agent's input, refusing block types
// the agent did not advertise.
func (c *Conn) input(blocks []acp.ContentBlock) (agent.Input, error) {
	var in agent.Input
	if len(blocks) == 1 { // the common prompt: its text as is, not a copy of a large one
		if t, ok := blocks[0].(*acp.TextContent); ok {
			in.Text = t.Text
			return in, nil
		}
	}
	var text strings.Builder
	for i, b := range blocks {
		switch b := b.(type) {
		case *acp.TextContent:
			text.WriteString(b.Text)
		case *acp.ResourceLink:
			fmt.Fprintf(&text, "\n[%s](%s)\n", b.Name, b.URI)
		case *acp.EmbeddedResource:
			switch r := b.Resource.(type) {
			case *acp.TextResourceContents:
				fmt.Fprintf(&text, "\n<context uri=%q>\n%s\n</context>\n", r.URI, r.Text)
			case *acp.BlobResourceContents:
				fmt.Fprintf(&text, "\n[binary resource %s (%s), not shown]\n", r.URI, r.MimeType)
			}
		case *acp.ImageContent:
			in.Images = append(in.Images, llm.Image{MimeType: b.MimeType, Data: b.Data})
		default:
			return in, acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("prompt[%d]", i), "reason": fmt.Sprintf("%s content is not supported (see promptCapabilities)", b.ContentType())})
		}
	}
	in.Text = text.String()
	return in, nil
}
