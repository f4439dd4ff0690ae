// This file implements the tool registry: layered, concurrency-safe, with
// filtered snapshots for subagents.

package tools

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

	// version counts this layer's changes; it moves under mu, and is
	// atomic so Tools can compare it without the lock.
	version atomic.Uint64
	// list is the last answer of Tools with the versions of the layers it
	// was built from, nearest first: every model call asks for the tools,
	// and they change rarely.
	list atomic.Pointer[toolList]
}

// toolList is a built answer of Tools, never changed once stored.
type toolList struct {
	versions []uint64 // of r, r.parent, …
	tools    []Tool
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
	r.version.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.tools[name] == reg {
				delete(r.tools, name)
				r.version.Add(1)
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

// Tools returns every visible tool, each name once, sorted by name. The
// slice is shared by every caller until a layer changes: read it, never
// write to it (its capacity is its length, so an append copies).
func (r *Registry) Tools() []Tool {
	if l := r.list.Load(); l != nil && r.current(l.versions) {
		return l.tools
	}
	l := r.build()
	r.list.Store(l)
	return l.tools
}

// current reports whether versions are still those of r and its parents.
func (r *Registry) current(versions []uint64) bool {
	i := 0
	for l := r; l != nil; l = l.parent {
		if i == len(versions) || l.version.Load() != versions[i] {
			return false
		}
		i++
	}
	return i == len(versions)
}

// build lists the visible tools, noting each layer's version as read
// under its lock. A concurrent change makes a version older than the
// layer, so the next Tools builds again: a stale list is never reused.
func (r *Registry) build() *toolList {
	seen := make(map[string]Tool)
	var versions []uint64
	for l := r; l != nil; l = l.parent {
		l.mu.RLock()
		versions = append(versions, l.version.Load())
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
	slices.SortFunc(out, cmpName)
	return &toolList{versions: versions, tools: out}
}

func cmpName(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) }

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
