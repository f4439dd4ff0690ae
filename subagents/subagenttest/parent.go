// This file builds a real top-level agent and its delegation scope.

package subagenttest

import (
	"context"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// ParentOptions configure [NewParent]. Zero values get test defaults.
type ParentOptions struct {
	// ID is the parent agent's id (default "parent").
	ID string
	// SessionID is the parent's session id (default "s_main").
	SessionID string
	// Model is the backend parent and children share (default [Echo]).
	Model   llm.Model
	ModelID string // default "test-model"
	// Service is where providers are found (default a new one).
	Service *subagents.Service
	// Tools is the parent's registry (default an empty one).
	Tools *tools.Registry
	// Permission is the parent's gate (default nil: allow everything).
	Permission tools.Permission
	Expose     subagents.Exposure
	// System is the parent's system prompt (default "You are the parent agent.").
	System   string
	History  agent.History
	Depth    int
	MaxDepth int
	// Registry lists live agents (default a new one).
	Registry *agent.Registry
	// Dir is the session's cwd (default t.TempDir()).
	Dir string
}

// Parent is a live top-level agent with the scope its tools see.
type Parent struct {
	Agent    *agent.Agent
	Scope    *subagents.Scope
	Env      *tools.Env
	Service  *subagents.Service
	Tools    *tools.Registry
	Registry *agent.Registry
}

// NewParent builds a real agent in a temporary workspace and its scope. The
// agent is closed when the test ends.
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
	if o.Registry == nil {
		o.Registry = &agent.Registry{}
	}
	if o.Dir == "" {
		o.Dir = tb.TempDir()
	}
	ws, err := workspace.New(o.Dir, nil)
	if err != nil {
		tb.Fatalf("workspace: %v", err)
	}
	system := o.System
	sysFn := func(context.Context) (string, error) { return system, nil }
	scope := &subagents.Scope{
		Service:      o.Service,
		SessionID:    o.SessionID,
		Depth:        o.Depth,
		MaxDepth:     o.MaxDepth,
		Cwd:          ws.Cwd(),
		Model:        o.Model,
		ModelID:      o.ModelID,
		Tools:        o.Tools,
		Expose:       o.Expose,
		Registry:     o.Registry,
		SystemPrompt: sysFn,
	}
	env := &tools.Env{Workspace: ws, FS: workspace.NewLocalFS(ws), Permission: o.Permission, Scope: scope}
	scope.Env = env
	a := agent.New(agent.Options{
		ID:       o.ID,
		Model:    o.Model,
		ModelID:  o.ModelID,
		System:   sysFn,
		Tools:    o.Tools,
		Env:      env,
		History:  o.History,
		Registry: o.Registry,
	})
	scope.Agent = a
	tb.Cleanup(a.Close)
	return &Parent{Agent: a, Scope: scope, Env: env, Service: o.Service, Tools: o.Tools, Registry: o.Registry}
}
