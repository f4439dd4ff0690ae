// This file defines what a call reads and changes, known before it runs,
// which the agent uses to keep the calls of one model response in the
// model's order where one may change what another sees.

package tools

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/dshd/dshd/tools/workspace"
)

// Access is what one call may read and change. Paths are absolute and
// confined; a path stands for everything under it (a directory listed or
// searched, a file written).
type Access struct {
	Reads, Writes []string
	// ReadsAll and WritesAll mean anything at all: a command, or a tool
	// that cannot tell.
	ReadsAll, WritesAll bool
}

// Accessor is implemented by tools that can tell a call's Access from
// its input before it runs (the built-in file tools). ws resolves the
// input's paths as the call will; an input the call will refuse may
// give an empty Access.
type Accessor interface {
	Access(ws *workspace.Workspace, input json.RawMessage) Access
}

// AccessOf returns the Access of a call of t with input: the tool's own
// when it is an [Accessor] and ws is known, else one by its kind. A
// command may read and change anything; a read or a search may read
// anything, an edit, delete or move change anything; a tool of another
// kind that may not run beside its own calls ([Parallel]) may do either,
// while one that may (a subagent) is taken to read anything — so
// delegations of one response still run side by side, after the changes
// the model made before them. Thinking, switching modes and fetching
// touch nothing of the session's.
func AccessOf(t Tool, ws *workspace.Workspace, input json.RawMessage) Access {
	if a, ok := t.(Accessor); ok && ws != nil {
		return a.Access(ws, input)
	}
	switch t.Kind() {
	case KindExecute:
		return Access{ReadsAll: true, WritesAll: true}
	case KindRead, KindSearch:
		return Access{ReadsAll: true}
	case KindEdit, KindDelete, KindMove:
		return Access{WritesAll: true}
	case KindThink, KindSwitchMode, KindFetch:
		return Access{}
	}
	if p, ok := t.(Parallel); ok && !p.ParallelSafe() {
		return Access{ReadsAll: true, WritesAll: true}
	}
	return Access{ReadsAll: true}
}

// Conflicts reports whether a and b must not run at once nor out of
// order: one of them changes what the other reads or changes.
func (a Access) Conflicts(b Access) bool {
	return a.writesInto(b) || b.writesInto(a)
}

// writesInto reports whether a changes something b reads or changes.
func (a Access) writesInto(b Access) bool {
	if !a.WritesAll && len(a.Writes) == 0 {
		return false
	}
	if a.WritesAll {
		return b.ReadsAll || b.WritesAll || len(b.Reads) > 0 || len(b.Writes) > 0
	}
	if b.ReadsAll || b.WritesAll {
		return true
	}
	for _, w := range a.Writes {
		for _, p := range b.Reads {
			if overlap(w, p) {
				return true
			}
		}
		for _, p := range b.Writes {
			if overlap(w, p) {
				return true
			}
		}
	}
	return false
}

// overlap reports whether one path is the other or lies under it.
func overlap(p, q string) bool {
	if len(p) > len(q) {
		p, q = q, p
	}
	return p == q || strings.HasPrefix(q, p) && (strings.HasSuffix(p, string(filepath.Separator)) || q[len(p)] == filepath.Separator)
}
