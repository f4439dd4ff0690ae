// This file holds the static half of a tool, which the built-in and the
// task tools embed (the built-in ones through [Typed]).

package tools

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Static implements the half of [Tool] and [Parallel] that no call
// changes: the name, description, input schema, kind and whether calls
// may run at the same time. A tool embeds it and adds Execute, or embeds
// the [Typed] made from it.
type Static struct {
	ToolName        string
	ToolDescription string
	// Schema returns the input schema; [LazySchema] builds one on first
	// use.
	Schema   func() json.RawMessage
	ToolKind Kind
	// Parallel says whether several calls may run at the same time.
	Parallel bool
}

func (s *Static) Name() string                 { return s.ToolName }
func (s *Static) Description() string          { return s.ToolDescription }
func (s *Static) InputSchema() json.RawMessage { return s.Schema() }
func (s *Static) Kind() Kind                   { return s.ToolKind }
func (s *Static) ParallelSafe() bool           { return s.Parallel }

// LazySchema returns a function that builds the schema of the params
// struct T ([SchemaFor], with edit) on first use and then returns it:
// reflecting over every tool's params when the tools are constructed
// would cost the daemon's cold start.
func LazySchema[T any](edit func(s *jsonschema.Schema)) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage { return SchemaFor[T](edit) })
}
