// This file implements an MCP server's tool as a tools.Tool: permission,
// the call, cancellation, and progress.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTool is one tool of one MCP server. It is immutable: a changed
// definition is a new mcpTool.
type mcpTool struct {
	srv      *server
	name     string // model-facing
	remote   string // the server's own name
	title    string
	desc     string
	schema   json.RawMessage
	readOnly bool
}

var (
	_ tools.Tool     = (*mcpTool)(nil)
	_ tools.Titler   = (*mcpTool)(nil)
	_ tools.Parallel = (*mcpTool)(nil)
)

// newTool makes d a tool; s.mu is held.
func newTool(s *server, name string, d *sdk.Tool) *mcpTool {
	t := &mcpTool{
		srv:    s,
		name:   name,
		remote: d.Name,
		title:  d.Title,
		schema: tools.ObjectSchema(d.InputSchema),
	}
	if a := d.Annotations; a != nil {
		t.readOnly = a.ReadOnlyHint
		if t.title == "" {
			t.title = a.Title
		}
	}
	desc := d.Description
	if desc == "" {
		desc = t.title
	}
	if max := s.opts.MaxDescriptionBytes; len(desc) > max {
		if !s.cutDescription {
			s.cutDescription = true
			s.log.Warn("mcp tool description cut", "tool", d.Name, "bytes", len(desc), "limit", max, "setting", s.opts.Settings.MaxDescriptionBytes)
		}
		desc = utf8cut.Prefix(desc, max) + fmt.Sprintf(" [description cut at %d of %d bytes]", max, len(desc))
	}
	t.desc = fmt.Sprintf("[MCP server %s] %s", s.cfg.Name, desc)
	return t
}

func (t *mcpTool) Name() string                 { return t.name }
func (t *mcpTool) Description() string          { return t.desc }
func (t *mcpTool) InputSchema() json.RawMessage { return t.schema }

// Kind is read for a tool the server marks read-only, other otherwise.
func (t *mcpTool) Kind() tools.Kind {
	if t.readOnly {
		return tools.KindRead
	}
	return tools.KindOther
}

// ParallelSafe lets read-only tools run side by side; the others run one at
// a time, as their effects may depend on order.
func (t *mcpTool) ParallelSafe() bool { return t.readOnly }

// Title is "SERVER: title" (the server's title, or its tool name).
func (t *mcpTool) Title(json.RawMessage) string {
	title := t.title
	if title == "" {
		title = t.remote
	}
	return t.srv.cfg.Name + ": " + title
}

// Execute asks permission (read-only tools need none under any mode), then
// calls the server. Failures the model can act on are error results; a Go
// error only when ctx ended or the permission gate failed.
func (t *mcpTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	args, bad := arguments(call.Input)
	if bad != nil {
		return bad, nil
	}
	effect := tools.EffectExecute
	if t.readOnly {
		effect = tools.EffectRead
	}
	res, err := permit(ctx, call, tools.PermissionRequest{
		ToolName: t.name,
		Title:    t.Title(call.Input),
		Kind:     t.Kind(),
		Effect:   effect,
	})
	if res != nil || err != nil {
		return res, err
	}
	return t.srv.call(ctx, t, args, call)
}

// arguments returns the call's input as the JSON object MCP wants.
func arguments(input json.RawMessage) (json.RawMessage, *tools.Result) {
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' {
		return nil, tools.Errorf("the arguments must be a JSON object")
	}
	return trimmed, nil
}

// permit asks the call's permission gate about req: permission.Check,
// what was rejected worded "this call of <title>".
func permit(ctx context.Context, call *tools.Call, req tools.PermissionRequest) (*tools.Result, error) {
	return permission.Check(ctx, call, req, "this call of "+req.Title)
}

// errCallTimeout is the cause of a call that ran out of CallTimeout.
var errCallTimeout = errors.New("mcp: the call ran out of time")

// call runs one tools/call. The call ends when ctx ends (the SDK then
// sends notifications/cancelled) or when the server is closed.
func (s *server) call(ctx context.Context, t *mcpTool, args json.RawMessage, call *tools.Call) (*tools.Result, error) {
	if reason := s.deadReason(); reason != "" {
		return s.goneResult(reason), nil
	}
	if s.ctx.Err() != nil {
		return tools.Errorf("MCP server %q was shut down", s.cfg.Name), nil
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(s.ctx, func() { cancel(nil) })
	defer stop()
	if d := s.opts.CallTimeout; d > 0 {
		timer := time.AfterFunc(d, func() { cancel(errCallTimeout) })
		defer timer.Stop()
	}

	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	if call.Report != nil {
		token := s.trackProgress(call.Report)
		defer s.untrackProgress(token)
		params.SetProgressToken(token)
	}
	res, err := s.cs.CallTool(cctx, params)
	switch {
	case err == nil:
		out, cut := mapResult(s.cfg.Name, res, s.opts.MaxOutput, s.opts.Settings.MaxOutput)
		if cut && !s.cutOutput.Swap(true) {
			s.log.Warn("mcp tool output cut", "tool", t.remote, "limit", s.opts.MaxOutput, "setting", s.opts.Settings.MaxOutput)
		}
		return out, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case s.ctx.Err() != nil:
		return tools.Errorf("MCP server %q was shut down during the call", s.cfg.Name), nil
	case errors.Is(context.Cause(cctx), errCallTimeout):
		if !s.timedOut.Swap(true) {
			s.log.Warn("an mcp tool call ran out of time", "tool", t.remote, "limit", s.opts.CallTimeout, "setting", s.opts.Settings.CallTimeout)
		}
		return tools.Errorf("MCP server %q did not answer this call of %s within %v, so it was cancelled (%s sets how long a call may take)", s.cfg.Name, t.remote, s.opts.CallTimeout, s.opts.Settings.CallTimeout), nil
	}
	if isConnectionLoss(err) {
		reason := s.awaitDeath()
		if reason == "" {
			reason = "the connection failed: " + s.red.scrub(err.Error())
		}
		return s.goneResult(reason), nil
	}
	return tools.Errorf("MCP server %q failed the call: %s", s.cfg.Name, s.red.scrub(err.Error())), nil
}

// isConnectionLoss tells a broken connection from an error the server
// answered with.
func isConnectionLoss(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sdk.ErrSessionMissing)
}

// awaitDeath gives the watcher time to record why the connection ended (a
// stdio server's exit status needs it reaped), bounded so a call never
// hangs on a connection that errs without ending.
func (s *server) awaitDeath() string {
	t := time.NewTimer(2 * s.opts.KillGrace)
	defer t.Stop()
	select {
	case <-s.gone:
	case <-s.ctx.Done():
	case <-t.C:
	}
	return s.deadReason()
}

func (s *server) goneResult(reason string) *tools.Result {
	return tools.Errorf("MCP server %q is no longer available (%s); its tools cannot be used for the rest of this session", s.cfg.Name, reason)
}

// progressSink forwards a running call's progress notifications to its
// reporter until the call returns.
type progressSink struct {
	mu   sync.Mutex
	rep  tools.Reporter
	done bool      // guarded by mu
	last time.Time // when the last update was passed on; guarded by mu
}

func (s *server) trackProgress(rep tools.Reporter) string {
	token := "dshd-" + strconv.FormatUint(s.progressSeq.Add(1), 10)
	s.progressMu.Lock()
	s.progress[token] = &progressSink{rep: rep}
	s.progressMu.Unlock()
	return token
}

func (s *server) untrackProgress(token string) {
	s.progressMu.Lock()
	p := s.progress[token]
	delete(s.progress, token)
	s.progressMu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.done = true
		p.mu.Unlock()
	}
}

// onProgress shows a progress notification as the call's interim content.
func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	s.progressMu.Lock()
	p := s.progress[token]
	s.progressMu.Unlock()
	if p == nil {
		return
	}
	text := "progress " + strconv.FormatFloat(req.Params.Progress, 'f', -1, 64)
	if req.Params.Total > 0 {
		text += "/" + strconv.FormatFloat(req.Params.Total, 'f', -1, 64)
	}
	if req.Params.Message != "" {
		text += ": " + req.Params.Message
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	// Each update reaches the editor and the session's journal: a server
	// that floods them is thinned to one per interval.
	now := time.Now()
	if !p.last.IsZero() && now.Sub(p.last) < s.opts.ProgressInterval {
		if !s.thinnedProgress.Swap(true) {
			s.log.Warn("mcp server sends progress faster than it is shown; passing on one update per interval", "interval", s.opts.ProgressInterval, "setting", s.opts.Settings.ProgressInterval)
		}
		return
	}
	p.last = now
	p.rep.Update(tools.Progress{Content: []tools.Content{tools.TextContent(s.red.scrub(text))}})
}
