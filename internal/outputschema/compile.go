// This file compiles a schema text, or finds it compiled.

package outputschema

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"
)

// compiled maps a schema text to its compiled schema, weakly: compiling
// costs ≈50 µs for a small schema (its decoder reads each nested schema
// several times), a lookup well under 1 µs.
var compiled sync.Map // string → weak.Pointer[jsonschema.Resolved]

// Compile returns raw compiled: the one compiled earlier while something
// still holds it, or one compiled now. The error says whether raw is not
// a JSON Schema at all or not a valid one. A compiled schema is shared:
// it is safe for concurrent validation and must not be changed.
func Compile(raw []byte) (*jsonschema.Resolved, error) {
	if v, ok := compiled.Load(string(raw)); ok {
		if r := v.(weak.Pointer[jsonschema.Resolved]).Value(); r != nil {
			return r, nil
		}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %v", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %v", err)
	}
	key := string(raw)
	p := weak.Make(r)
	compiled.Store(key, p)
	// When r's last holder lets go, its entry goes; a schema of the same
	// text compiled meanwhile (two callers at once) keeps its own.
	runtime.AddCleanup(r, func(key string) { compiled.CompareAndDelete(key, p) }, key)
	return r, nil
}
