// This file holds Typed, the half of a tool written against its params
// struct: a call's arguments are decoded in this one place before the
// tool's code (its run, and its title: TitleOf) sees them.

package tools

import (
	"context"
	"encoding/json"
)

// Typed implements [Tool], [Parallel] and [Titler] for a tool whose
// arguments are the params struct P: [Typed.Execute] decodes them with
// [DecodeInput] and runs the tool with them; arguments that do not decode
// are the model's error result, and the tool does not run. Everything
// else is its [Static] half's. The built-in tools are one, or embed one
// (those with more methods), and a task tool bound to a session is one;
// [NewTyped] makes it.
type Typed[P any] struct {
	Static
	run func(ctx context.Context, call *Call, p P) (*Result, error)
}

// NewTyped returns the Typed half of a tool: s is its static half (a nil
// s.Schema is P's, built on first use: [LazySchema] without edit), and
// run runs a call.
func NewTyped[P any](s Static, run func(ctx context.Context, call *Call, p P) (*Result, error)) Typed[P] {
	if s.Schema == nil {
		s.Schema = LazySchema[P](nil)
	}
	return Typed[P]{Static: s, run: run}
}

// Execute decodes the call's arguments and runs the tool with them.
func (t *Typed[P]) Execute(ctx context.Context, call *Call) (*Result, error) {
	p, err := DecodeInput[P](call.Input)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return t.run(ctx, call, p)
}

// TitleOf is a [Static.ToolTitle] written against the params struct P: a
// call's title is title of its decoded arguments, of the zero P when they
// do not decode (the call will fail, but is still shown).
func TitleOf[P any](title func(p P) string) func(input json.RawMessage) string {
	return func(input json.RawMessage) string {
		p, _ := DecodeInput[P](input)
		return title(p)
	}
}
