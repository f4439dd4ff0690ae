package tools

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type schemaParams struct {
	Name  string       `json:"name" jsonschema:"Who it is"`
	Count int          `json:"count,omitempty" jsonschema:"How many"`
	Flags []string     `json:"flags,omitzero"`
	Items []schemaItem `json:"items"`
}

type schemaItem struct {
	Kind string `json:"kind" jsonschema:"What it is"`
}

func TestSchemaFor(t *testing.T) {
	got := string(SchemaFor[schemaParams](func(s *jsonschema.Schema) {
		s.Properties["items"].Items.Properties["kind"].Enum = []any{"a", "b"}
	}))
	// Properties come in field order; slices are arrays, never null; a
	// field is required unless omitempty or omitzero; nested structs are
	// closed objects too; edit's additions are in.
	want := `{"type":"object","required":["name","items"],"additionalProperties":false,"properties":{` +
		`"name":{"type":"string","description":"Who it is"},` +
		`"count":{"type":"integer","description":"How many"},` +
		`"flags":{"type":"array","items":{"type":"string"}},` +
		`"items":{"type":"array","items":{"type":"object","required":["kind"],"additionalProperties":false,"properties":{"kind":{"type":"string","description":"What it is","enum":["a","b"]}}}}}}`
	if !sameJSON(t, got, want) {
		t.Errorf("schema:\n%s\nwant:\n%s", got, want)
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"a schema with a type is kept", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "x-extra": 1},
			`{"type":"object","properties":{"q":{"type":"string"}},"x-extra":1}`},
		{"a schema without a type becomes an object schema", map[string]any{"properties": map[string]any{}},
			`{"type":"object","properties":{}}`},
		{"a raw JSON schema is kept", json.RawMessage(`{"type":"object","required":["a"]}`), `{"type":"object","required":["a"]}`},
		{"no schema is a tool without arguments", nil, `{"type":"object","properties":{}}`},
		{"a non-object is a tool without arguments", []any{1}, `{"type":"object","properties":{}}`},
		{"a string is a tool without arguments", "nonsense", `{"type":"object","properties":{}}`},
		{"an object the library cannot read goes on as it came", map[string]any{"required": "q"}, `{"required":"q"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(ObjectSchema(tc.in)); !sameJSON(t, got, tc.want) {
				t.Errorf("ObjectSchema = %s, want %s", got, tc.want)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
