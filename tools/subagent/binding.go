// This file defines a binding (tool name → provider), its flag syntax and
// the default bindings.

package subagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

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
	ToolName string
	// Description, when set, is the head of the tool's description (what
	// the agent is for); the wording derived from the provider follows it.
	Description  string
	AgentOptions AgentOptions
	// DenyPermissions pins the children's permission requests to "deny".
	DenyPermissions bool
	// Tools restricts the children's tools (the ToolFilter start-time
	// capability); nil gives them the parent's.
	Tools *subagents.ToolFilter
	// OutputSchema is a JSON Schema the children's final answer must be
	// valid against (the OutputSchema capability); OutputSchemaFile is
	// where it was read from, for messages and String.
	OutputSchema     json.RawMessage
	OutputSchemaFile string
	// MaxDepth, when set, is how many levels of subagents the children may
	// start below themselves (the DepthLimit capability; 0 forbids them to
	// delegate).
	MaxDepth *int
	// Budget bounds each child with its descendants (carried in the start
	// request; see [subagents.Budget]).
	Budget subagents.Budget
	// Background starts each run as a task of the calling session
	// (tools/tasks): the call returns at once with the task's id, and the
	// model follows the run with the task tools. The model still sees
	// only {description, prompt}.
	Background bool
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

// Binding option keys every binding takes, whatever its provider. Each
// means the same as the agent definition key in parentheses.
const (
	KeyDescription     = "description"      // description
	KeyModel           = "model"            // model
	KeySystemPrompt    = "system-prompt"    // the body
	KeyDenyPermissions = "deny-permissions" // permissions: deny
	KeyTools           = "tools"            // tools
	KeyDenyTools       = "deny-tools"       // disallowedTools
	KeyOutputSchema    = "output-schema"    // outputSchema
	KeyMaxDepth        = "max-depth"        // maxDepth
	KeyMaxTurns        = "max-turns"        // maxTurns
	KeyMaxTokens       = "max-tokens"       // maxTokens
	KeyBackground      = "background"       // background
)

// bindingKeys lists them, in the order messages show them.
var bindingKeys = []string{KeyDescription, KeyModel, KeySystemPrompt, KeyDenyPermissions, KeyTools, KeyDenyTools,
	KeyOutputSchema, KeyMaxDepth, KeyMaxTurns, KeyMaxTokens, KeyBackground}

// ParseBinding parses the --subagent flag syntax
// TOOLNAME=PROVIDER[,key=value...]. The keys every binding takes:
//
//	description=TEXT     the head of the tool's description
//	model=ID             the children's model (default: the parent's)
//	system-prompt=TEXT   the children's system prompt ({{var}} template)
//	deny-permissions     children's permission requests are denied (=true/false)
//	tools=a|b            the only tools the children get
//	deny-tools=c|d       tools taken away from the children
//	output-schema=FILE   a JSON Schema file the final answer must match
//	max-depth=N          levels of subagents the children may start below them
//	max-turns=N          model round trips of a child and its descendants
//	max-tokens=N         tokens of a child and its descendants
//	background           runs start as tasks of the session (=true/false)
//
// A value cannot contain a comma (longer text belongs in an agent
// definition file). Any other key goes to Options for the provider, which
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
		if err := b.set(k, v, hasValue); err != nil {
			return Binding{}, err
		}
	}
	return b.normalized()
}

// set applies one option of the flag syntax.
func (b *Binding) set(k, v string, hasValue bool) error {
	switch k {
	case KeyDescription, KeyModel, KeySystemPrompt:
		// Empty, the option would say nothing and the default would
		// stand in silently: a value lost in quoting, most likely.
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s=%q: want %s", k, v, map[string]string{KeyDescription: "the tool's description for the model",
				KeyModel: "a model id (leave the option out for the parent's model)", KeySystemPrompt: "the child's system prompt"}[k])
		}
		switch k {
		case KeyDescription:
			b.Description = v
		case KeyModel:
			b.AgentOptions.Model = v
		default:
			b.AgentOptions.SystemPrompt = v
		}
	case KeyDenyPermissions, KeyBackground:
		on := true
		if hasValue {
			var err error
			if on, err = strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s=%q: want true or false", k, v)
			}
		}
		if k == KeyBackground {
			b.Background = on
		} else {
			b.DenyPermissions = on
		}
	case KeyTools, KeyDenyTools:
		names, err := toolList(k, v)
		if err != nil {
			return err
		}
		if b.Tools == nil {
			b.Tools = &subagents.ToolFilter{}
		}
		if k == KeyTools {
			b.Tools.Allow = names
		} else {
			b.Tools.Deny = names
		}
	case KeyOutputSchema:
		if v == "" {
			return errors.New("output-schema=: want the path of a JSON Schema file")
		}
		raw, err := os.ReadFile(v)
		if err != nil {
			return fmt.Errorf("output-schema=%s: %w", v, err)
		}
		if !json.Valid(raw) {
			return fmt.Errorf("output-schema=%s: the file is not JSON", v)
		}
		b.OutputSchema, b.OutputSchemaFile = raw, v
	case KeyMaxDepth, KeyMaxTurns, KeyMaxTokens:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (n == 0 && k != KeyMaxDepth) {
			least := "1"
			if k == KeyMaxDepth {
				least = "0"
			}
			return fmt.Errorf("%s=%q: want a whole number from %s", k, v, least)
		}
		switch k {
		case KeyMaxDepth:
			b.MaxDepth = &n
		case KeyMaxTurns:
			b.Budget.MaxTurns = n
		default:
			b.Budget.MaxTokens = n
		}
	default:
		if b.Options == nil {
			b.Options = make(map[string]string)
		}
		b.Options[k] = v
	}
	return nil
}

// toolList reads a|b|c.
func toolList(k, v string) ([]string, error) {
	var names []string
	for n := range strings.SplitSeq(v, "|") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("%s=%q: want tool names separated by |", k, v)
		}
		names = append(names, n)
	}
	return names, nil
}

// String returns b in the flag syntax ParseBinding reads.
func (b Binding) String() string {
	var s strings.Builder
	s.WriteString(b.ToolName + "=" + b.Provider)
	add := func(k, v string) {
		if v != "" {
			s.WriteString("," + k + "=" + v)
		}
	}
	add(KeyDescription, b.Description)
	add(KeyModel, b.AgentOptions.Model)
	add(KeySystemPrompt, b.AgentOptions.SystemPrompt)
	if b.DenyPermissions {
		s.WriteString("," + KeyDenyPermissions)
	}
	if b.Tools != nil {
		add(KeyTools, strings.Join(b.Tools.Allow, "|"))
		add(KeyDenyTools, strings.Join(b.Tools.Deny, "|"))
	}
	add(KeyOutputSchema, b.OutputSchemaFile)
	if b.MaxDepth != nil {
		add(KeyMaxDepth, strconv.Itoa(*b.MaxDepth))
	}
	if b.Budget.MaxTurns > 0 {
		add(KeyMaxTurns, strconv.Itoa(b.Budget.MaxTurns))
	}
	if b.Budget.MaxTokens > 0 {
		add(KeyMaxTokens, strconv.Itoa(b.Budget.MaxTokens))
	}
	if b.Background {
		s.WriteString("," + KeyBackground)
	}
	for _, k := range slices.Sorted(maps.Keys(b.Options)) {
		add(k, b.Options[k])
	}
	return s.String()
}
