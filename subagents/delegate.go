// This file binds a session's delegating tools to its Scope.

package subagents

import (
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools"
)

// Delegator is a tool that starts subagent runs from the calling agent's
// Scope (the subagent tool). It is registered once, daemon-wide; each
// session's agent sees it bound to that session's Scope.
type Delegator interface {
	tools.Tool
	// BindScope returns the tool as the agent delegating from sc runs it.
	BindScope(sc *Scope) tools.Tool
}

var _ session.Delegation = (*Scope)(nil)

// Attach makes sc the delegation scope of s: it records the session and
// what s lends an out-of-process child, and returns ts as s's agent sees
// it, every [Delegator] in it bound to sc. session.New calls it once,
// before the session is used.
func (sc *Scope) Attach(s *session.Session, ts agent.ToolSet) agent.ToolSet {
	sc.Session = s
	sc.Cwd, sc.AdditionalDirectories = s.Cwd(), s.AdditionalDirectories()
	sc.Env, sc.MCPServers = s.Env(), s.MCPServers()
	return scopedTools{ts: ts, scope: sc}
}

// scopedTools is a tool set whose Delegators are bound to one Scope. The
// unbound tools it lists describe themselves the same; only Get, which
// the agent runs a call through, binds.
type scopedTools struct {
	ts    agent.ToolSet
	scope *Scope
}

func (t scopedTools) Tools() []tools.Tool { return t.ts.Tools() }

func (t scopedTools) Get(name string) (tools.Tool, bool) {
	tl, ok := t.ts.Get(name)
	if d, isDelegator := tl.(Delegator); ok && isDelegator {
		return d.BindScope(t.scope), true
	}
	return tl, ok
}
