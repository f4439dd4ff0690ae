// This file builds a real top-level session and its delegation scope.

package subagenttest

import (
	"context"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/tasks"
)

// ParentOptions configure [NewParent]. Zero values get test defaults.
type ParentOptions struct {
	// ID is the parent session's id (default "parent").
	ID string
	// SessionID is the id the editor knows the parent by (default
	// "s_main").
	SessionID string
	// Model is the backend parent and children share (default [Echo]).
	Model   llm.Model
	ModelID string // default "test-model"
	// MaxTokens caps the parent's (and by default its children's) output.
	MaxTokens int
	// TurnLimits bound each of the parent's turns with everything its
	// children spend.
	TurnLimits budget.Limits
	// Service is where providers are found (default a new one).
	Service *subagents.Service
	// Tools is the parent's registry (default an empty one).
	Tools *tools.Registry
	// Permission is the parent's gate (default nil: allow everything).
	Permission tools.Permission
	Expose     subagents.Exposure
	// System is the parent's system prompt (default "You are the parent
	// agent."); SystemFunc, when set, is its source instead.
	System     string
	SystemFunc func(ctx context.Context) (string, error)
	History    agent.History
	Depth      int
	MaxDepth   int
	// Registry lists live agents (default a new one).
	Registry *agent.Registry
	// Dir is the session's cwd (default t.TempDir()).
	Dir string
	// Tasks are the limits of the session's background tasks.
	Tasks tasks.Options
}

// Parent is a live top-level session with the scope its tools see.
type Parent struct {
	Session  *session.Session
	Agent    *agent.Agent
	Scope    *subagents.Scope
	Env      *tools.Env
	Service  *subagents.Service
	Tools    *tools.Registry
	Registry *agent.Registry
	sees     *seen
}

// Tool returns the tool called name as the parent's agent runs it: bound
// to the parent's scope when it delegates.
func (p *Parent) Tool(name string) (tools.Tool, bool) { return p.sees.ts.Get(name) }

// seen is the parent's delegation, remembering the tool set the agent
// sees.
type seen struct {
	*subagents.Scope
	ts agent.ToolSet
}

func (d *seen) Attach(s *session.Session, ts agent.ToolSet) agent.ToolSet {
	d.ts = d.Scope.Attach(s, ts)
	return d.ts
}

// NewParent builds a real session in a temporary workspace, through
// session.New as the daemon builds one, and its scope. The session is
// closed when the test ends.
func NewParent(tb testing.TB, o ParentOptions) *Parent {
	tb.Helper()
	if o.ID == "" {
		o.ID = "parent"
	}
	if o.SessionID == "" {
		o.SessionID = "s_main"
	}
	if o.Model == nil {
		o.Model = Echo
	}
	if o.ModelID == "" {
		o.ModelID = "test-model"
	}
	if o.Service == nil {
		o.Service = subagents.NewService(nil)
	}
	if o.Tools == nil {
		o.Tools = tools.NewRegistry(nil)
	}
	if o.System == "" {
		o.System = "You are the parent agent."
	}
	if o.SystemFunc == nil {
		system := o.System
		o.SystemFunc = func(context.Context) (string, error) { return system, nil }
	}
	if o.Registry == nil {
		o.Registry = &agent.Registry{}
	}
	if o.Dir == "" {
		o.Dir = tb.TempDir()
	}
	scope := &subagents.Scope{
		Service:   o.Service,
		SessionID: o.SessionID,
		Depth:     o.Depth,
		MaxDepth:  o.MaxDepth,
		Expose:    o.Expose,
	}
	sees := &seen{Scope: scope}
	cfg := session.Config{
		ID:         o.ID,
		Cwd:        o.Dir,
		Model:      o.Model,
		ModelID:    o.ModelID,
		MaxTokens:  o.MaxTokens,
		TurnLimits: o.TurnLimits,
		Tools:      o.Tools,
		Permission: o.Permission,
		System:     o.SystemFunc,
		Delegation: sees,
		History:    o.History,
		Registry:   o.Registry,
		Tasks:      o.Tasks,
	}
	if o.Permission == nil {
		// No gate: a policy that never asks.
		cfg.Mode = permission.ModeYolo
	}
	s, err := session.New(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("session: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return &Parent{Session: s, Agent: s.Agent(), Scope: scope, Env: s.Env(), Service: o.Service, Tools: o.Tools, Registry: o.Registry, sees: sees}
}
