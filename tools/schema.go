// This file builds a tool's JSON Schema from its params struct.

package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SchemaFor returns the JSON Schema of the params struct T: an object whose
// properties are T's exported fields, named by their json tags. A field is
// required unless its json tag says omitempty or omitzero. The tag
// `jsonschema:"..."` is the property's description and `enum:"a,b,c"` its
// allowed values. Nested structs and slices of them are described the
// same way. It panics on a type it cannot describe: schemas are built from
// fixed types when a tool is constructed, so that is a programming error.
func SchemaFor[T any]() json.RawMessage {
	s := schemaOf(reflect.TypeFor[T]())
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// schemaOf describes t as a JSON-ready value. Maps keep their keys sorted
// when marshalled, so the schema text is stable.
func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		required := []string{}
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := schemaOf(f.Type)
			if d := f.Tag.Get("jsonschema"); d != "" {
				p["description"] = d
			}
			if e := f.Tag.Get("enum"); e != "" {
				p["enum"] = strings.Split(e, ",")
			}
			props[name] = p
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				required = append(required, name)
			}
		}
		return map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             required,
			"additionalProperties": false,
		}
	}
	panic(fmt.Sprintf("tools: cannot describe %s in a schema", t))
}
