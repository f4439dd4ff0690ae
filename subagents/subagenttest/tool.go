// This file holds a tool driven by a function.

package subagenttest

import (
	"context"
	"encoding/json"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
)

// Tool is a [tools.Tool] whose Execute is Fn.
type Tool struct {
	ToolName string
	ToolKind tools.Kind // default other
	Fn       func(ctx context.Context, call *tools.Call) (*tools.Result, error)
}

var _ tools.Tool = (*Tool)(nil)

// Name implements [tools.Tool].
func (t *Tool) Name() string { return t.ToolName }

// Description implements [tools.Tool].
func (t *Tool) Description() string { return "A test tool." }

// InputSchema implements [tools.Tool].
func (t *Tool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

// Kind implements [tools.Tool].
func (t *Tool) Kind() tools.Kind {
	if t.ToolKind == "" {
		return tools.KindOther
	}
	return t.ToolKind
}

// Execute implements [tools.Tool].
func (t *Tool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	return t.Fn(ctx, call)
}

// Register adds tool to reg for the rest of the test.
func Register(tb interface {
	Helper()
	Fatalf(string, ...any)
	Cleanup(func())
}, reg *tools.Registry, tool tools.Tool) {
	tb.Helper()
	unregister, err := reg.Register(tool)
	if err != nil {
		tb.Fatalf("register %s: %v", tool.Name(), err)
	}
	tb.Cleanup(unregister)
}

// Delegating is a tool that starts runs itself, as the subagent tool
// does: Fn gets the scope of the agent that calls it, bound by that
// agent's session.
type Delegating struct {
	ToolName string
	Fn       func(ctx context.Context, call *tools.Call, sc *subagents.Scope) (*tools.Result, error)
}

var _ subagents.Delegator = (*Delegating)(nil)

// Name implements [tools.Tool].
func (t *Delegating) Name() string { return t.ToolName }

// Description implements [tools.Tool].
func (t *Delegating) Description() string { return "A test tool that delegates." }

// InputSchema implements [tools.Tool].
func (t *Delegating) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

// Kind implements [tools.Tool].
func (t *Delegating) Kind() tools.Kind { return tools.KindOther }

// Execute implements [tools.Tool]: outside a session there is no scope.
func (t *Delegating) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	return t.Fn(ctx, call, nil)
}

// BindScope implements [subagents.Delegator].
func (t *Delegating) BindScope(sc *subagents.Scope) tools.Tool {
	return &Tool{ToolName: t.ToolName, Fn: func(ctx context.Context, call *tools.Call) (*tools.Result, error) {
		return t.Fn(ctx, call, sc)
	}}
}
