// This file implements the tool registry: layered, concurrency-safe, with
// filtered snapshots for subagents.

package tools

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry is a set of tools, looked up by name. A registry may have a
// parent it falls back to: the daemon-wide layer holds the built-ins and
// the subagent tools that come and go, and each session adds a layer on
// top for its MCP tools. A Registry is safe for concurrent use.
//
// Names are unique across layers at registration time. A parent that later
// registers a name a child already has is not prevented (the parent does
// not know its children); the nearest layer then wins in Get and Tools.
type Registry struct {
	parent *Registry

	mu    sync.RWMutex
	tools map[string]*registration // guarded by mu
}

// registration is one Register call, compared by identity so a stale
// unregister func never removes a later tool of the same name.
type registration struct {
	tool Tool
}

// NewRegistry returns an empty registry layered over parent (nil for none).
func NewRegistry(parent *Registry) *Registry {
	return &Registry{parent: parent, tools: make(map[string]*registration)}
}

// Register adds t. It fails with an [*DuplicateToolError] when the name is
// taken in this layer or any parent, and with an error wrapping
// [ErrInvalidToolName] for a name the model APIs would refuse. unregister
// removes the tool; it is idempotent and safe to call from any goroutine.
func (r *Registry) Register(t Tool) (unregister func(), err error) {
	name := t.Name()
	if !ValidToolName(name) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidToolName, name)
	}
	reg := &registration{tool: t}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; ok {
		return nil, &DuplicateToolError{Name: name}
	}
	// Lock order is always child before parent, so this cannot deadlock.
	if r.parent != nil {
		if _, ok := r.parent.Get(name); ok {
			return nil, &DuplicateToolError{Name: name}
		}
	}
	r.tools[name] = reg
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.tools[name] == reg {
				delete(r.tools, name)
			}
		})
	}, nil
}

// Get returns the tool called name, looking in this layer first and then
// in its parents.
func (r *Registry) Get(name string) (Tool, bool) {
	for l := r; l != nil; l = l.parent {
		l.mu.RLock()
		reg, ok := l.tools[name]
		l.mu.RUnlock()
		if ok {
			return reg.tool, true
		}
	}
	return nil, false
}

// Tools returns every visible tool, each name once, sorted by name.
func (r *Registry) Tools() []Tool {
	seen := make(map[string]Tool)
	for l := r; l != nil; l = l.parent {
		l.mu.RLock()
		for name, reg := range l.tools {
			if _, ok := seen[name]; !ok {
				seen[name] = reg.tool
			}
		}
		l.mu.RUnlock()
	}
	out := make([]Tool, 0, len(seen))
	for _, t := range seen {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names returns the names of Tools, sorted.
func (r *Registry) Names() []string {
	ts := r.Tools()
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	return names
}

// Filter returns a snapshot of the visible tools that are in allow (every
// tool when allow is empty) and not in deny. The snapshot is a new,
// parentless registry: tools registered or removed later do not change it.
// A name in either list that no layer knows makes Filter fail with an
// [*UnknownToolError] naming every such name.
func (r *Registry) Filter(allow, deny []string) (*Registry, error) {
	all := r.Tools()
	known := make(map[string]Tool, len(all))
	for _, t := range all {
		known[t.Name()] = t
	}
	var unknown []string
	for _, n := range slices.Concat(allow, deny) {
		if _, ok := known[n]; !ok && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, &UnknownToolError{Names: unknown}
	}
	out := NewRegistry(nil)
	for name, t := range known {
		if len(allow) > 0 && !slices.Contains(allow, name) {
			continue
		}
		if slices.Contains(deny, name) {
			continue
		}
		out.tools[name] = &registration{tool: t}
	}
	return out, nil
}

// ValidToolName reports whether name is 1 to 64 letters, digits, '_' or
// '-', the set every model API accepts.
func ValidToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
