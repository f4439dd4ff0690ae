// This file holds the static half of a tool, which the built-in and the
// task tools embed (the built-in ones through [Typed]): what it is, and
// how it titles a call.

package tools

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Static implements the half of [Tool], [Parallel] and [Titler] that no
// call changes: the name, description, input schema, kind, whether calls
// may run at the same time, and the rule that titles a call from its
// arguments. A tool embeds it and adds Execute, or embeds the [Typed]
// made from it; a copy (a tool bound to a session) keeps all of it.
type Static struct {
	ToolName        string
	ToolDescription string
	// Schema returns the input schema; [LazySchema] builds one on first
	// use.
	Schema   func() json.RawMessage
	ToolKind Kind
	// Parallel says whether several calls may run at the same time.
	Parallel bool
	// ToolTitle is a call's title from its raw arguments, before it
	// runs ([TitleOf] decodes them into the params struct first); nil,
	// or an empty title, is the tool's name.
	ToolTitle func(input json.RawMessage) string
}

func (s *Static) Name() string                 { return s.ToolName }
func (s *Static) Description() string          { return s.ToolDescription }
func (s *Static) InputSchema() json.RawMessage { return s.Schema() }
func (s *Static) Kind() Kind                   { return s.ToolKind }
func (s *Static) ParallelSafe() bool           { return s.Parallel }

// Title is the call's title by the tool's ToolTitle; "" (the tool's name)
// without one.
func (s *Static) Title(input json.RawMessage) string {
	if s.ToolTitle == nil {
		return ""
	}
	return s.ToolTitle(input)
}

// LazySchema returns a function that builds the schema of the params
// struct T ([SchemaFor], with edit) on first use and then returns it:
// reflecting over every tool's params when the tools are constructed
// would cost the daemon's cold start.
func LazySchema[T any](edit func(s *jsonschema.Schema)) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage { return SchemaFor[T](edit) })
}
