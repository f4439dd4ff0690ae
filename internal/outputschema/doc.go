// Package outputschema compiles the JSON Schemas subagent bindings and
// agent definitions give their children's final answers
// (google/jsonschema-go), once per schema text while anything holds the
// compiled schema: a binding holds its schema from its first call, and
// every start of its children finds it compiled.
//
// Nothing is kept on anyone's behalf: an entry lives as long as a holder
// keeps its schema, so the cache needs no bound. It imports nothing of
// the project and starts no goroutines (the runtime runs the cleanups
// that drop an entry).
package outputschema
