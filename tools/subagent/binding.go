// This file defines a binding (tool name → provider), its flag syntax and
// the default bindings.

package subagent

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dshd/dshd/tools"
)

// DefaultToolName is the tool name of a binding that does not set one.
const DefaultToolName = "subagent"

// AgentOptions are defaults applied to every child a binding starts.
type AgentOptions struct {
	// Model is the model the child asks for; empty inherits the parent's.
	Model string
	// SystemPrompt replaces the provider's default child system prompt
	// ({{var}} template; see the prompt package).
	SystemPrompt string
}

// Binding ties one model-facing tool to one provider.
type Binding struct {
	// Provider is the provider's name in the service; required.
	Provider string
	// ToolName is the model-facing name (default [DefaultToolName]). Two
	// bindings on one registry need distinct names.
	ToolName     string
	AgentOptions AgentOptions
	// DenyPermissions pins the children's permission requests to "deny".
	DenyPermissions bool
	// Options are provider-specific settings (for example an acp
	// provider's command), passed through as given.
	Options map[string]string
}

// DefaultBindings returns the bindings a daemon has unless told otherwise:
// subagent → spawn and subagent_fork → fork.
func DefaultBindings() []Binding {
	return []Binding{
		{ToolName: DefaultToolName, Provider: "spawn"},
		{ToolName: "subagent_fork", Provider: "fork"},
	}
}

// normalized returns b with defaults filled in, or an error for a binding
// that cannot work.
func (b Binding) normalized() (Binding, error) {
	if b.ToolName == "" {
		b.ToolName = DefaultToolName
	}
	if b.Provider == "" {
		return b, fmt.Errorf("subagent: binding %q names no provider", b.ToolName)
	}
	if !tools.ValidToolName(b.ToolName) {
		return b, fmt.Errorf("subagent: %q is not a valid tool name (1-64 letters, digits, '_' or '-')", b.ToolName)
	}
	b.Options = maps.Clone(b.Options)
	return b, nil
}

// ParseBinding parses the --subagent flag syntax
// TOOLNAME=PROVIDER[,key=value...]. The keys model, system-prompt and
// deny-permissions (true/false, or bare for true) set the fields of the
// same name; any other key goes to Options for the provider.
func ParseBinding(s string) (Binding, error) {
	parts := strings.Split(s, ",")
	name, provider, ok := strings.Cut(parts[0], "=")
	name, provider = strings.TrimSpace(name), strings.TrimSpace(provider)
	if !ok || name == "" || provider == "" {
		return Binding{}, fmt.Errorf("subagent: binding %q: want TOOLNAME=PROVIDER[,key=value...]", s)
	}
	b := Binding{ToolName: name, Provider: provider}
	seen := map[string]bool{}
	for _, kv := range parts[1:] {
		k, v, hasValue := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			return Binding{}, fmt.Errorf("subagent: binding %q: empty option", s)
		}
		if seen[k] {
			return Binding{}, fmt.Errorf("subagent: binding %q: option %q given twice", s, k)
		}
		seen[k] = true
		switch k {
		case "model":
			b.AgentOptions.Model = v
		case "system-prompt":
			b.AgentOptions.SystemPrompt = v
		case "deny-permissions":
			deny := true
			if hasValue {
				var err error
				if deny, err = strconv.ParseBool(v); err != nil {
					return Binding{}, fmt.Errorf("subagent: binding %q: deny-permissions=%q is not true or false", s, v)
				}
			}
			b.DenyPermissions = deny
		default:
			if b.Options == nil {
				b.Options = make(map[string]string)
			}
			b.Options[k] = v
		}
	}
	return b.normalized()
}

// String returns b in the flag syntax ParseBinding reads.
func (b Binding) String() string {
	var s strings.Builder
	s.WriteString(b.ToolName + "=" + b.Provider)
	if b.AgentOptions.Model != "" {
		s.WriteString(",model=" + b.AgentOptions.Model)
	}
	if b.AgentOptions.SystemPrompt != "" {
		s.WriteString(",system-prompt=" + b.AgentOptions.SystemPrompt)
	}
	if b.DenyPermissions {
		s.WriteString(",deny-permissions")
	}
	for _, k := range slices.Sorted(maps.Keys(b.Options)) {
		s.WriteString("," + k + "=" + b.Options[k])
	}
	return s.String()
}
