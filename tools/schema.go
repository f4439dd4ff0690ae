// This file is the one schema builder of the project's tools: the built-in
// tools and the subagent tool describe their params structs with it, and
// MCP servers' schemas go through it on their way to the model.

package tools

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor returns the JSON Schema of the params struct T, as
// jsonschema.For infers it: an object whose properties are T's exported
// fields named by their json tags, required unless the tag says omitempty
// or omitzero, described by their `jsonschema:"..."` tags, with no
// additional properties. Slices are plain arrays (jsonschema.For also
// allows null for them, which no tool accepts). edit, when non-nil, adds
// what a struct tag cannot say (allowed values, a description known only
// at run time) before the schema is encoded.
//
// Schemas are built from fixed types, so a type the library cannot
// describe is a programming error and panics. Build them on first use
// ([LazySchema]): reflecting over every tool's params when the tools are
// constructed costs the daemon's cold start.
func SchemaFor[T any](edit func(s *jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: schema: %v", err))
	}
	notNull(s)
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: schema: %v", err))
	}
	return b
}

// notNull turns the ["null", "array"] types jsonschema.For gives slices
// back into "array", through properties and items.
func notNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	notNull(s.Items)
	for _, p := range s.Properties {
		notNull(p)
	}
}

// emptyObject is the schema of a tool that takes no arguments.
var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

// ObjectSchema returns a schema that came as data (an MCP server's
// inputSchema, decoded JSON) as the object schema a model API expects:
// without a type it gets "type": "object"; anything that is not a JSON
// object, or none at all, is the schema of a tool without arguments. An
// object the library cannot read as a schema goes on as it came: the
// model may still make sense of it, and the server judges the arguments.
func ObjectSchema(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return emptyObject
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return b
	}
	if s.Type == "" && len(s.Types) == 0 {
		s.Type = "object"
	}
	out, err := json.Marshal(&s)
	if err != nil {
		return emptyObject
	}
	return out
}
