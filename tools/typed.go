// This file holds Typed, the half of a tool written against its params
// struct: a call's arguments are decoded in this one place before the
// tool's code sees them.

package tools

import (
	"context"
	"encoding/json"
)

// Typed implements [Tool] and [Titler] for a tool whose arguments are
// the params struct P: [Typed.Execute] decodes them with [DecodeInput]
// and runs the tool with them; arguments that do not decode are the
// model's error result, and the tool does not run. The built-in tools
// embed one, and a task tool bound to a session is one; [NewTyped] makes
// it.
type Typed[P any] struct {
	Static
	run   func(ctx context.Context, call *Call, p P) (*Result, error)
	title func(p P) string
}

// NewTyped returns the Typed half of a tool: s is its static half (a nil
// s.Schema is P's, built on first use: [LazySchema] without edit), run
// runs a call, and title, when not nil, is a call's title from its
// arguments (the zero P when they do not decode).
func NewTyped[P any](s Static, run func(ctx context.Context, call *Call, p P) (*Result, error), title func(p P) string) Typed[P] {
	if s.Schema == nil {
		s.Schema = LazySchema[P](nil)
	}
	return Typed[P]{Static: s, run: run, title: title}
}

// Execute decodes the call's arguments and runs the tool with them.
func (t *Typed[P]) Execute(ctx context.Context, call *Call) (*Result, error) {
	p, err := DecodeInput[P](call.Input)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return t.run(ctx, call, p)
}

// Title is the call's title from its arguments; "" (the tool's name)
// when the tool has no title of its own.
func (t *Typed[P]) Title(input json.RawMessage) string {
	if t.title == nil {
		return ""
	}
	p, _ := DecodeInput[P](input)
	return t.title(p)
}
