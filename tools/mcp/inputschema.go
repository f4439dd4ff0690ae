// This file checks a tool's input schema before the model sees it: a
// schema a model API cannot take would fail every request of the session,
// naming a tool the user never saw dshd accept.

package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/internal/outputschema"
)

// jsonTypes are the values JSON Schema's "type" takes.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// inputSchemaFault says what is wrong with a tool's input schema, or ""
// when nothing is: it must be a JSON Schema google/jsonschema-go resolves,
// of type "object" (what MCP requires and model APIs take as a function's
// parameters), whose every "type" names a JSON type (the library does not
// check that).
func inputSchemaFault(schema any) string {
	raw, err := json.Marshal(schema)
	if err != nil {
		return fmt.Sprintf("its input schema cannot be encoded: %v", err)
	}
	r, err := outputschema.Compile(raw)
	if err != nil {
		return "its input schema is " + err.Error()
	}
	root := r.Schema()
	if root.Type != "object" && !slices.Equal(root.Types, []string{"object"}) {
		return fmt.Sprintf("its input schema is not of type \"object\" (it has type %s)", typeOf(root))
	}
	if t := badType(root); t != "" {
		return fmt.Sprintf("its input schema has the type %q, which is not a JSON type (%s)", t, strings.Join(jsonTypes, ", "))
	}
	return ""
}

// typeOf shows a schema's type as written: a name, a list, or none.
func typeOf(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return fmt.Sprintf("%q", s.Type)
	case len(s.Types) > 0:
		b, _ := json.Marshal(s.Types)
		return string(b)
	}
	return "none"
}

// schemaType is the type of a schema's subschema fields.
var schemaType = reflect.TypeFor[*jsonschema.Schema]()

// badType is the first type named in s or a schema within it that is
// not a JSON type, or "". The library keeps its walk of a schema
// unexported; this one reads every field that holds schemas (one, a list
// or a map of them), so a keyword the library adds is walked too. The
// depth was bounded before (schemaDepth).
func badType(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !slices.Contains(jsonTypes, t) {
			return t
		}
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		var kids []reflect.Value
		switch {
		case !v.Type().Field(i).IsExported():
		case f.Type() == schemaType:
			kids = []reflect.Value{f}
		case (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Type().Elem() == schemaType:
			kids = valuesOf(f)
		}
		for _, k := range kids {
			if t := badType(k.Interface().(*jsonschema.Schema)); t != "" {
				return t
			}
		}
	}
	return ""
}

// valuesOf lists a slice's elements or a map's values.
func valuesOf(f reflect.Value) []reflect.Value {
	if f.Kind() == reflect.Slice {
		out := make([]reflect.Value, f.Len())
		for i := range out {
			out[i] = f.Index(i)
		}
		return out
	}
	out := make([]reflect.Value, 0, f.Len())
	for it := f.MapRange(); it.Next(); {
		out = append(out, it.Value())
	}
	return out
}
