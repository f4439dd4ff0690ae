// This file defines a binding (tool name → provider), its flag syntax and
// the default bindings.

package subagent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/subagents"
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

// Binding option keys every binding takes, whatever its provider.
const (
	KeyModel           = "model"
	KeySystemPrompt    = "system-prompt"
	KeyDenyPermissions = "deny-permissions"
)

// bindingKeys lists them, in the order messages show them.
var bindingKeys = []string{KeyModel, KeySystemPrompt, KeyDenyPermissions}

// ParseBinding parses the --subagent flag syntax
// TOOLNAME=PROVIDER[,key=value...]. The keys model, system-prompt and
// deny-permissions (true/false, or bare for true) set the fields of the
// same name; any other key goes to Options for the provider, which
// [Check] holds to what the provider takes. Its errors say what is wrong
// with the binding; the caller names the binding and where it came from.
func ParseBinding(s string) (Binding, error) {
	parts := strings.Split(s, ",")
	name, provider, ok := strings.Cut(parts[0], "=")
	name, provider = strings.TrimSpace(name), strings.TrimSpace(provider)
	if !ok || name == "" || provider == "" {
		return Binding{}, errors.New("want TOOLNAME=PROVIDER[,key=value...]")
	}
	if !tools.ValidToolName(name) {
		return Binding{}, fmt.Errorf("%q is not a valid tool name (1-64 letters, digits, '_' or '-')", name)
	}
	b := Binding{ToolName: name, Provider: provider}
	seen := map[string]bool{}
	for _, kv := range parts[1:] {
		k, v, hasValue := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			return Binding{}, errors.New("an empty option (two commas, or one at the end)")
		}
		if seen[k] {
			return Binding{}, fmt.Errorf("option %q given twice", k)
		}
		seen[k] = true
		switch k {
		case KeyModel:
			b.AgentOptions.Model = v
		case KeySystemPrompt:
			b.AgentOptions.SystemPrompt = v
		case KeyDenyPermissions:
			deny := true
			if hasValue {
				var err error
				if deny, err = strconv.ParseBool(v); err != nil {
					return Binding{}, fmt.Errorf("deny-permissions=%q: want true or false", v)
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

// OptionChecker is a provider that takes binding options of its own
// ([Binding.Options]); a provider without it takes none.
type OptionChecker interface {
	// OptionKeys lists the keys the provider takes.
	OptionKeys() []string
	// CheckOptions reports the first option whose value cannot work,
	// without starting anything. It sees only keys from OptionKeys.
	CheckOptions(opts map[string]string) error
}

// Check reports whether b can work with the providers of svc, so that a
// daemon refuses a mistaken binding at start instead of offering a tool
// that never appears or fails when the model calls it. The provider must
// be registered (for a name none is registered under, the closest is
// suggested), and every option must be one the provider takes, with a
// value it accepts. A daemon whose providers are all registered at start
// calls it for every binding; a provider that registers later is still
// followed by [BindWith].
func Check(b Binding, svc *subagents.Service) error {
	p, ok := svc.Provider(b.Provider)
	if !ok {
		names := svc.List()
		return fmt.Errorf("unknown provider %q (dshd has %s)%s", b.Provider, strings.Join(names, ", "), suggest.DidYouMean(b.Provider, names))
	}
	oc, _ := p.(OptionChecker)
	var keys []string
	if oc != nil {
		keys = oc.OptionKeys()
	}
	for _, k := range slices.Sorted(maps.Keys(b.Options)) {
		if !slices.Contains(keys, k) {
			known := append(slices.Clone(bindingKeys), keys...)
			return fmt.Errorf("unknown option %q for provider %s (it takes %s)%s", k, p.Name(), strings.Join(known, ", "), suggest.DidYouMean(k, known))
		}
	}
	if oc == nil {
		return nil
	}
	return oc.CheckOptions(maps.Clone(b.Options))
}

// String returns b in the flag syntax ParseBinding reads.
func (b Binding) String() string {
	var s strings.Builder
	s.WriteString(b.ToolName + "=" + b.Provider)
	if b.AgentOptions.Model != "" {
		s.WriteString("," + KeyModel + "=" + b.AgentOptions.Model)
	}
	if b.AgentOptions.SystemPrompt != "" {
		s.WriteString("," + KeySystemPrompt + "=" + b.AgentOptions.SystemPrompt)
	}
	if b.DenyPermissions {
		s.WriteString("," + KeyDenyPermissions)
	}
	for _, k := range slices.Sorted(maps.Keys(b.Options)) {
		s.WriteString("," + k + "=" + b.Options[k])
	}
	return s.String()
}
