// This file lists the subagent tools among a tool set, for the /agents
// command.

package subagent

import (
	"fmt"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
)

// Bindings returns the bindings behind the subagent tools among ts, in
// their order.
func Bindings(ts []tools.Tool) []Binding {
	var out []Binding
	for _, t := range ts {
		if st, ok := t.(*tool); ok {
			out = append(out, st.b)
		}
	}
	return out
}

// Describe is the /agents answer: each agent with its provider, what it
// is for and the tools its children get.
func Describe(bs []Binding) string { return describeBindings(bs, nil) }

// DescribeTools is [Describe] of the subagent tools among ts, an agent's
// tool set. It knows each binding's provider, so the children of a
// provider that cannot filter tools (an acp agent, which brings its own)
// are not said to get the parent's.
func DescribeTools(ts []tools.Tool) string {
	var (
		bs  []Binding
		own []bool
	)
	for _, t := range ts {
		st, ok := t.(*tool)
		if !ok {
			continue
		}
		bs = append(bs, st.b)
		p, found := st.svc.Provider(st.b.Provider)
		own = append(own, found && !p.Capabilities().ToolFilter && !p.InheritsParentContext())
	}
	return describeBindings(bs, own)
}

// describeBindings lists bs; ownTools[i] says that the children of bs[i] bring
// tools of their own.
func describeBindings(bs []Binding, ownTools []bool) string {
	if len(bs) == 0 {
		return "This session has no agents to delegate to."
	}
	var b strings.Builder
	b.WriteString("Agents this session can delegate to:\n")
	for i, x := range bs {
		fmt.Fprintf(&b, "\n- %s (provider %s)", x.ToolName, x.Provider)
		if d := utf8cut.Line(x.Description, 160); d != "" {
			b.WriteString(": " + d)
		}
		switch {
		case i < len(ownTools) && ownTools[i]:
			b.WriteString("\n  tools: the agent's own")
		case x.Tools == nil:
			b.WriteString("\n  tools: the parent's")
		case len(x.Tools.Allow) > 0:
			b.WriteString("\n  tools: " + strings.Join(x.Tools.Allow, ", "))
		default:
			b.WriteString("\n  tools: the parent's")
		}
		if x.Tools != nil && len(x.Tools.Deny) > 0 {
			b.WriteString(", except " + strings.Join(x.Tools.Deny, ", "))
		}
		if x.AgentOptions.Model != "" {
			b.WriteString("\n  model: " + x.AgentOptions.Model)
		}
		if len(x.OutputSchema) > 0 {
			b.WriteString("\n  answers in JSON (output schema)")
		}
		if x.DenyPermissions {
			b.WriteString("\n  permissions: denied")
		}
	}
	b.WriteString("\n")
	return b.String()
}
