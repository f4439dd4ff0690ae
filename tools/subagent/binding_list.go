// This file lists the subagent tools among a tool set, for the /agents
// command.

package subagent

import (
	"fmt"
	"strings"

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
func Describe(bs []Binding) string {
	if len(bs) == 0 {
		return "This session has no agents to delegate to."
	}
	var b strings.Builder
	b.WriteString("Agents this session can delegate to:\n")
	for _, x := range bs {
		fmt.Fprintf(&b, "\n- %s (provider %s)", x.ToolName, x.Provider)
		if d := oneLine(x.Description, 160); d != "" {
			b.WriteString(": " + d)
		}
		switch {
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
