// This file implements the in-process Provider: it builds a child agent
// from the parent's scope and starts its run.

package inproc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
	"github.com/dshd/dshd/tools"
)

// Config configures a [Provider]. Zero values are defaults.
type Config struct {
	// Name is the provider's name ("spawn", "fork").
	Name string
	// Inherit seeds the child with the parent's completed turns and system
	// prompt (fork); otherwise the child starts empty (spawn).
	Inherit bool
	// SystemTemplate replaces the embedded subagent template for children
	// whose request has no SystemPrompt (spawn only).
	SystemTemplate string
	// SkipProjectInstructions leaves AGENTS.md out of a spawned child's
	// system prompt.
	SkipProjectInstructions bool
	// MaxTurnRequests caps the child's model calls per turn (the agent's
	// default when zero).
	MaxTurnRequests int
	// ProgressInterval is the least time between two fallback progress
	// reports (default one second).
	ProgressInterval time.Duration
	// Now returns the time for the prompt's date (time.Now by default).
	Now    func() time.Time
	Logger *slog.Logger
}

// Provider runs children in this process.
type Provider struct {
	cfg Config
	log *slog.Logger
	seq atomic.Uint64

	defaultTemplate string
	basesMu         sync.Mutex
	bases           map[baseKey]string // guarded by basesMu
	instructions    instructionsCache
}

var _ subagents.Provider = (*Provider)(nil)

// New returns a provider configured by cfg.
func New(cfg Config) *Provider {
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The embedded template always exists; a failure here is a build error.
	tmpl, err := prompt.Template(prompt.Subagent)
	if err != nil {
		panic(err)
	}
	return &Provider{cfg: cfg, log: log.With("provider", cfg.Name), defaultTemplate: tmpl, bases: make(map[baseKey]string)}
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

func invalid(format string, args ...any) error {
	return &subagents.Error{Code: subagents.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// Start builds the child and starts its turn. It returns once the child
// exists: its agent is created and registered and, when the editor sees
// children, it is announced with its task and marked running. Every check
// that can fail runs before anything is created or announced.
func (p *Provider) Start(ctx context.Context, req subagents.StartRequest) (subagents.Run, error) {
	parent := req.Parent
	switch {
	case parent == nil:
		return nil, invalid("a start request needs a parent scope")
	case parent.Model == nil:
		return nil, invalid("the parent scope has no model")
	case p.cfg.Inherit && parent.Agent == nil:
		return nil, invalid("a forked child needs the parent's agent")
	}
	if err := subagents.CheckCapabilities(p.Capabilities(), req); err != nil {
		return nil, err
	}
	if err := subagents.CheckDepth(req); err != nil {
		return nil, err
	}
	depth, subtreeLimit := subagents.ChildLimits(req)

	var schema *jsonschema.Resolved
	if len(req.OutputSchema) > 0 {
		var err error
		if schema, err = runkit.ResolveSchema(req.OutputSchema); err != nil {
			return nil, invalid("output schema: %v", err)
		}
	}
	toolReg := parent.Tools
	if req.ToolFilter != nil {
		if toolReg == nil {
			toolReg = tools.NewRegistry(nil)
		}
		filtered, err := toolReg.Filter(req.ToolFilter.Allow, req.ToolFilter.Deny)
		if err != nil {
			return nil, invalid("tool filter: %v", err)
		}
		toolReg = filtered
	}
	modelID := req.Model
	if modelID == "" {
		// The parent's current model: the editor may have switched it
		// since the scope was made.
		modelID = parent.ModelID
		if parent.Agent != nil {
			modelID = parent.Agent.ModelID()
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = parent.MaxTokens
	}
	name := req.Name
	if name == "" {
		name = p.cfg.Name
	}

	var history agent.History
	system := parent.SystemPrompt
	if p.cfg.Inherit {
		history = parent.Agent.CompletedHistory()
	} else {
		text, err := p.childSystem(req, parent.Cwd, modelID, p.cfg.Now())
		if err != nil {
			return nil, invalid("%v", err)
		}
		system = func(context.Context) (string, error) { return text, nil }
	}

	parentID := parent.SessionID
	if parent.Agent != nil {
		parentID = parent.Agent.ID()
	}
	c := &child{
		p:                p,
		id:               parentID + "/" + p.cfg.Name + "-" + strconv.FormatUint(p.seq.Add(1), 10),
		parent:           parent,
		expose:           parent.Expose,
		schema:           schema,
		log:              p.log,
		system:           system,
		progressInterval: p.cfg.ProgressInterval,
		schemaRaw:        req.OutputSchema,
	}
	c.log = p.log.With("run", c.id)
	c.runs.Hold()
	r := c.newRun(ctx, childInput(p.cfg.Inherit, req), req.Progress)

	// The editor learns of the child before the child exists or does
	// anything, so no traffic can precede the announcement.
	if c.expose != nil {
		sess, err := c.expose.Announce(parent.SessionID, subagents.Announcement{
			Title:       name,
			Description: req.Description,
			Cancel:      c.runs.CancelCurrent,
		})
		if err != nil {
			r.cancel()
			return nil, fmt.Errorf("subagents: announcing the child: %w", err)
		}
		c.session = sess
	}

	scope := &subagents.Scope{
		Service:               parent.Service,
		SessionID:             parent.SessionID,
		Depth:                 depth,
		MaxDepth:              subtreeLimit,
		Cwd:                   parent.Cwd,
		AdditionalDirectories: parent.AdditionalDirectories,
		Model:                 parent.Model,
		ModelID:               modelID,
		MaxTokens:             maxTokens,
		ContextWindow:         parent.ContextWindow,
		Tools:                 toolReg,
		SystemPrompt:          system,
		MCPServers:            parent.MCPServers,
		Registry:              parent.Registry,
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
	env := childEnv(parent.Env, scope, requester, req.DenyPermissions)
	scope.Env = env

	opts := agent.Options{
		ID:              c.id,
		Model:           parent.Model,
		ModelID:         modelID,
		MaxTokens:       maxTokens,
		ContextWindow:   parent.ContextWindow,
		MaxTurnRequests: p.cfg.MaxTurnRequests,
		System:          c.turnStarting,
		Env:             env,
		History:         history,
		Registry:        parent.Registry,
		Logger:          p.log,
	}
	if toolReg != nil {
		opts.Tools = toolReg
	}
	c.agent = agent.New(opts)
	scope.Agent = c.agent

	if c.expose != nil {
		c.expose.Message(parent.SessionID, c.session, req.Prompt)
	}
	r.begin()
	return r, nil
}

// childEnv returns the child's environment: the parent's workspace, file
// system and runner (so the child always works in the parent session's
// cwd), its own scope, and a permission gate that can never allow more
// than the parent's: DenyAll when permissions are pinned to deny,
// otherwise the parent's own gate (its mode and remembered answers apply)
// with requests labelled as the child's.
func childEnv(parent *tools.Env, scope *subagents.Scope, requester string, deny bool) *tools.Env {
	var env tools.Env
	if parent != nil {
		env = *parent
	}
	env.Plan = nil
	env.Scope = scope
	switch {
	case deny:
		env.Permission = tools.DenyAll
	case env.Permission != nil:
		env.Permission = requesterGate{inner: env.Permission, requester: requester}
	}
	return &env
}

// requesterGate forwards to the parent's gate, labelling the request with
// the child it comes from. A label already set by a deeper descendant is
// kept: the request belongs to the child that made it.
type requesterGate struct {
	inner     tools.Permission
	requester string
}

func (g requesterGate) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	if req.Requester == "" {
		req.Requester = g.requester
	}
	return g.inner.Check(ctx, req)
}
