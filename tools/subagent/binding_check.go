// This file checks a binding against its provider before any tool exists:
// the provider, its options, the start-time capabilities the binding
// needs, its schema, its system prompt and the tools it names.

package subagent

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/internal/outputschema"
	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
)

// OptionChecker is a provider that takes binding options of its own
// ([Binding.Options]); a provider without it takes none.
type OptionChecker interface {
	// OptionKeys lists the keys the provider takes.
	OptionKeys() []string
	// CheckOptions reports the first option whose value cannot work,
	// without starting anything. It sees only keys from OptionKeys.
	CheckOptions(opts map[string]string) error
}

// OptionError is [Check]'s error for a binding that cannot work: which
// option is wrong, with which provider and, when the provider lacks a
// start-time capability the option needs, which one.
type OptionError struct {
	// Key is the binding option ("tools", "output-schema", …); "" for
	// the provider itself.
	Key string
	// Provider is the provider's name.
	Provider string
	// Capability is the start-time capability the provider lacks
	// ("toolFilter", "outputSchema", "depthLimit"); "" otherwise.
	Capability string
	// Unknown: the provider takes no option Key.
	Unknown bool
	Err     error
}

func (e *OptionError) Error() string {
	switch {
	case e.Unknown:
		return fmt.Sprintf("unknown option %q for provider %s %v", e.Key, e.Provider, e.Err)
	case e.Key == "":
		return e.Err.Error()
	}
	return e.Key + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// Capability names, as the seam and its messages spell them.
const (
	CapToolFilter   = "toolFilter"
	CapOutputSchema = "outputSchema"
	CapDepthLimit   = "depthLimit"
)

// Check reports whether b can work with the providers of svc, so that a
// daemon refuses a mistaken binding (or agent definition) when it is
// loaded instead of offering a tool that never appears or fails when the
// model calls it. In order: the provider must be registered (for a name
// none is registered under, the closest is suggested); every option must
// be one the provider takes, with a value it accepts; every start-time
// capability the binding needs (a tool filter, an output schema, a depth
// limit) must be one the provider declares; the output schema must be a
// JSON Schema; and the system prompt must render with the subagent
// variables. The error is an [*OptionError]. A provider that registers
// later is still followed by [Bind]; the service's Start checks the
// capabilities again.
func Check(b Binding, svc *subagents.Service) error {
	p, ok := svc.Provider(b.Provider)
	if !ok {
		names := svc.List()
		return &OptionError{Provider: b.Provider, Err: fmt.Errorf("unknown provider %q (dshd has %s)%s", b.Provider, strings.Join(names, ", "), suggest.DidYouMean(b.Provider, names))}
	}
	name := p.Name()
	oc, _ := p.(OptionChecker)
	var keys []string
	if oc != nil {
		keys = oc.OptionKeys()
	}
	for _, k := range slices.Sorted(maps.Keys(b.Options)) {
		if !slices.Contains(keys, k) {
			known := append(slices.Clone(bindingKeys), keys...)
			return &OptionError{Key: k, Provider: name, Unknown: true, Err: fmt.Errorf("(it takes %s)%s", strings.Join(known, ", "), suggest.DidYouMean(k, known))}
		}
	}
	if oc != nil {
		if err := oc.CheckOptions(maps.Clone(b.Options)); err != nil {
			return &OptionError{Provider: name, Err: err}
		}
	}
	caps := p.Capabilities()
	lacks := func(key, capability, what string) error {
		return &OptionError{Key: key, Provider: name, Capability: capability,
			Err: fmt.Errorf("the %s provider cannot %s (it lacks the %s capability)", name, what, capability)}
	}
	if b.Tools != nil && !caps.ToolFilter {
		key := KeyTools
		if len(b.Tools.Allow) == 0 {
			key = KeyDenyTools
		}
		return lacks(key, CapToolFilter, "restrict its children's tools")
	}
	if len(b.OutputSchema) > 0 {
		if !caps.OutputSchema {
			return lacks(KeyOutputSchema, CapOutputSchema, "validate its children's answers against a schema")
		}
		if err := checkSchema(b.OutputSchema); err != nil {
			return &OptionError{Key: KeyOutputSchema, Provider: name, Capability: CapOutputSchema, Err: err}
		}
	}
	if b.MaxDepth != nil && !caps.DepthLimit {
		return lacks(KeyMaxDepth, CapDepthLimit, "limit how deep its children delegate")
	}
	if err := checkTemplate(b.AgentOptions.SystemPrompt); err != nil {
		return &OptionError{Key: KeySystemPrompt, Provider: name, Err: err}
	}
	return nil
}

// checkSchema compiles a JSON Schema. Compiling is most of the cost of
// checking a definition, and the same schema is checked again for every
// workspace that reads the user's definitions, so the verdicts on the
// last schemas seen are kept.
func checkSchema(raw json.RawMessage) error {
	key := string(raw)
	if v, ok := schemaVerdicts.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	// Compiled as a start compiles it: a schema the check takes is one
	// every start takes.
	_, err := outputschema.Compile(raw)
	if schemaVerdictCount.Add(1) > maxSchemaVerdicts {
		schemaVerdicts.Clear()
		schemaVerdictCount.Store(0)
	}
	if err != nil {
		schemaVerdicts.Store(key, err)
	} else {
		schemaVerdicts.Store(key, nil)
	}
	return err
}

// maxSchemaVerdicts bounds the verdicts kept; the cache starts over when
// it is full.
const maxSchemaVerdicts = 1024

var (
	schemaVerdicts     sync.Map // schema text → error (nil when valid)
	schemaVerdictCount atomic.Int64
)

// checkTemplate renders a system prompt template with the subagent
// variables (stand-in values), so an unknown variable or a malformed group
// is found when the binding is loaded, not when a child starts.
func checkTemplate(tmpl string) error {
	if tmpl == "" {
		return nil
	}
	_, err := prompt.Render(tmpl, prompt.SubagentVars("/", "model", time.Time{}, false))
	return err
}

// SessionToolPrefix starts the names of tools that exist only in a
// session (MCP servers' tools, mcp__SERVER__TOOL): [CheckTools] leaves
// them to the child's start, where the session's tools are known.
const SessionToolPrefix = "mcp__"

// CheckTools reports the first tool b's filter names that is not among
// names, the tools that exist, with the closest one suggested. Names
// starting with [SessionToolPrefix] are not checked here.
func CheckTools(b Binding, names []string) error {
	if b.Tools == nil {
		return nil
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{KeyTools, b.Tools.Allow}, {KeyDenyTools, b.Tools.Deny}} {
		for _, n := range l.names {
			if strings.HasPrefix(n, SessionToolPrefix) || slices.Contains(names, n) {
				continue
			}
			return &OptionError{Key: l.key, Provider: b.Provider, Err: fmt.Errorf("there is no tool named %q%s", n, suggest.DidYouMean(n, names))}
		}
	}
	return nil
}
