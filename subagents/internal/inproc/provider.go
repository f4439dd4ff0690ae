// This file implements the in-process Provider: it builds a child session
// from the parent's, through session.New, and starts its run.

package inproc

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
	"github.com/dshd/dshd/tools/permission"
)

// Config configures a [Provider]. Zero values are defaults.
type Config struct {
	// Name is the provider's name ("spawn", "fork").
	Name string
	// Inherit reports that the child sees the parent's conversation
	// (fork); it is what InheritsParentContext answers.
	Inherit bool
	// Begin says how a child of parent starts: what makes a fork a fork,
	// or a fresh child fresh. It runs in Start after every check, before
	// anything is created; an error fails Start as an invalid request.
	Begin func(parent *session.Session, req subagents.StartRequest, modelID string) (Beginning, error)
	subagents.InProcessOptions
}

// Beginning is how a child starts.
type Beginning struct {
	// History is the conversation the child continues (a fork's shared
	// prefix); empty for a fresh child.
	History agent.History
	// System is the child's system prompt source.
	System func(ctx context.Context) (string, error)
	// Frame is the text before the task in the child's first message ("").
	Frame string
}

// Provider runs children in this process.
type Provider struct {
	cfg Config
	log *slog.Logger
	seq atomic.Uint64
}

var (
	_ subagents.Provider = (*Provider)(nil)
	_ subagents.Restorer = (*Provider)(nil)
)

// New returns a provider configured by cfg.
func New(cfg Config) *Provider {
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = time.Second
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	return &Provider{cfg: cfg, log: log.With("provider", cfg.Name)}
}

// Name returns the configured name.
func (p *Provider) Name() string { return p.cfg.Name }

// Capabilities declares every start-time capability: an in-process child
// can validate its answer, limit its subtree's depth and filter its tools.
func (p *Provider) Capabilities() subagents.Capabilities {
	return subagents.Capabilities{OutputSchema: true, DepthLimit: true, ToolFilter: true}
}

// InheritsParentContext reports whether children see the parent's turns.
func (p *Provider) InheritsParentContext() bool { return p.cfg.Inherit }

// Start builds the child and returns once it exists: its session is built
// and its agent registered and, when the editor sees children, it is
// announced with its task and marked running. Its turn begins with the
// owner's first Wait. Every check that can fail runs before anything is
// created or announced; a ctx that has already ended then gets a run that
// settled aborted, and nothing is created.
func (p *Provider) Start(ctx context.Context, req subagents.StartRequest) (subagents.Run, error) {
	return p.build(ctx, req, nil)
}

// snapshot is what a Durable run of this provider saves: the child's
// conversation and the id the editor knew it by.
type snapshot struct {
	Messages []llm.Message `json:"messages"`
	Session  string        `json:"session,omitempty"`
}

// Restore rebuilds a child from a snapshot: its conversation as the
// snapshot holds it, its system prompt and tools from req as at Start.
// The run returned has ended; resuming it continues the conversation
// (the editor, when it sees children, is shown the child again under its
// old id).
func (p *Provider) Restore(ctx context.Context, req subagents.StartRequest, raw json.RawMessage) (subagents.Run, error) {
	var snap snapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		return nil, runkit.Invalid("the snapshot is not this provider's: %v", err)
	}
	return p.build(ctx, req, &snap)
}

// build is Start, or with snap Restore.
func (p *Provider) build(ctx context.Context, req subagents.StartRequest, snap *snapshot) (subagents.Run, error) {
	parent := req.Parent
	switch {
	case parent == nil:
		return nil, runkit.Invalid("a start request needs a parent scope")
	case parent.Session == nil:
		return nil, runkit.Invalid("the parent scope has no session")
	}
	depth, subtreeLimit, err := subagents.AdmitChild(p, req)
	if err != nil {
		return nil, err
	}

	schema, err := runkit.RequestSchema(req.OutputSchema)
	if err != nil {
		return nil, err
	}
	// The child starts as its parent's session is now: the same
	// workspace, file system, runner, model (the editor may have switched
	// it since the parent began), limits, tools and registry.
	cfg := parent.Session.ChildConfig()
	if req.ToolFilter != nil {
		filtered, err := cfg.Tools.Filter(req.ToolFilter.Allow, req.ToolFilter.Deny)
		if err != nil {
			return nil, runkit.Invalid("tool filter: %v", err)
		}
		cfg.Tools = filtered
	}
	if req.Model != "" {
		cfg.ModelID = req.Model
	}
	if req.MaxTokens > 0 {
		cfg.MaxTokens = req.MaxTokens
	}
	begin, err := p.cfg.Begin(parent.Session, req, cfg.ModelID)
	if err != nil {
		return nil, runkit.Invalid("%v", err)
	}
	if snap != nil {
		begin.History = agent.NewHistory(snap.Messages...)
	}
	name := req.Name
	if name == "" {
		name = p.cfg.Name
	}
	id := parent.Session.ID() + "/" + p.cfg.Name + "-" + strconv.FormatUint(p.seq.Add(1), 10)
	if ctx.Err() != nil {
		// The caller's turn is already cancelled: no child is built,
		// registered or shown, and nothing runs.
		return runkit.NewSettled(id, subagents.Result{StopReason: subagents.StopAborted}), nil
	}

	c := &child{
		p:                p,
		id:               id,
		parent:           parent,
		expose:           parent.Expose,
		schema:           schema,
		progressInterval: p.cfg.ProgressInterval,
		schemaRaw:        req.OutputSchema,
		activity:         req.Activity,
	}
	c.log = p.log.With("run", c.id)
	c.runs.Hold()
	r := c.newRun(ctx, childInput(begin.Frame, req), req.Progress)

	// The editor learns of the child before the child exists or does
	// anything, so no traffic can precede the announcement.
	if c.expose != nil {
		a := subagents.Announcement{
			Title:       name,
			Description: req.Description,
			Cancel:      c.runs.CancelCurrent,
		}
		if snap != nil {
			a.ID = snap.Session
		}
		sess, err := c.expose.Announce(parent.SessionID, a)
		if err != nil {
			r.cancel()
			return nil, fmt.Errorf("subagents: announcing the child: %w", err)
		}
		c.session = sess
	}

	scope := &subagents.Scope{
		Service:   parent.Service,
		SessionID: parent.SessionID,
		Depth:     depth,
		MaxDepth:  subtreeLimit,
	}
	requester := req.ToolCallID
	if c.session != "" {
		scope.SessionID = c.session
		scope.Expose = c.expose
		requester = c.session
	}
	if requester == "" {
		requester = c.id
	}
	cfg.ID = c.id
	cfg.MaxTurnRequests = p.cfg.MaxTurnRequests
	cfg.History = begin.History
	cfg.System = begin.System
	cfg.TurnStarting = c.turnStarting
	cfg.Permission = permission.ForChild(cfg.Permission, requester, req.DenyPermissions)
	cfg.Delegation = scope
	// Everything the child spends is charged to its run's meter, and so to
	// the delegating turn's; the budgets on the way bind it before each of
	// its model calls.
	c.meter = subagents.RunMeter(req)
	cfg.Meter = c.meter
	cfg.Logger = p.log
	s, err := session.New(ctx, cfg)
	if err != nil {
		r.cancel()
		if c.expose != nil {
			c.expose.Forget(c.session)
		}
		return nil, fmt.Errorf("subagents: building the child: %w", err)
	}
	c.sess, c.agent = s, s.Agent()

	if snap != nil {
		// A restored child has ended its last run; Resume starts the next.
		r.launched = true
		c.runs.Begin(r)
		r.Finish(subagents.Result{StopReason: subagents.StopCompleted, ChildSessionID: c.session})
		return r, nil
	}
	if c.expose != nil {
		c.expose.Message(parent.SessionID, c.session, req.Prompt)
	}
	r.begin()
	return r, nil
}
