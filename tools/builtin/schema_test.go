package builtin

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemas_TheModelSeesWhatItSawBefore compares every built-in tool's
// schema with testdata/schemas.golden.json, the schemas the hand-written
// builder produced before jsonschema-go replaced it. They must mean the
// same: same properties, types, descriptions, allowed values and required
// fields. The only difference allowed is how an empty required list is
// written ([] before, absent now), which JSON Schema reads the same way.
func TestSchemas_TheModelSeesWhatItSawBefore(t *testing.T) {
	b, err := os.ReadFile("testdata/schemas.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]any
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	tools := Builtins(nil)
	if len(tools) != len(golden) {
		t.Fatalf("%d tools, %d golden schemas", len(tools), len(golden))
	}
	for _, tl := range tools {
		var got any
		if err := json.Unmarshal(tl.InputSchema(), &got); err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		want, ok := golden[tl.Name()]
		if !ok {
			t.Fatalf("%s has no golden schema", tl.Name())
		}
		if g, w := dropEmptyRequired(got), dropEmptyRequired(want); !reflect.DeepEqual(g, w) {
			gj, _ := json.MarshalIndent(g, "", "  ")
			wj, _ := json.MarshalIndent(w, "", "  ")
			t.Errorf("%s: schema\n%s\nwant\n%s", tl.Name(), gj, wj)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(tl.InputSchema(), &s); err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: the schema does not resolve: %v", tl.Name(), err)
		}
	}
}

// dropEmptyRequired removes every "required": [] from a decoded schema.
func dropEmptyRequired(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if r, ok := e.([]any); ok && k == "required" && len(r) == 0 {
				continue
			}
			out[k] = dropEmptyRequired(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = dropEmptyRequired(e)
		}
		return out
	}
	return v
}
