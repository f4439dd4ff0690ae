package openai

import (
	"go/build"
	"strings"
	"testing"
)

// The model backend must not depend on the wire package: what it shares
// with acp (the rule for an error's reason) lives in a leaf both import.
func TestLayering_TheModelBackendDoesNotImportTheWirePackage(t *testing.T) {
	const module = "github.com/dshd/dshd/"
	seen := map[string]bool{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if path == module+"acp" || strings.HasPrefix(path, module+"acp/") {
			t.Errorf("%s imports %s", from, path)
			return
		}
		pkg, err := build.Import(path, ".", 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				walk(imp, path)
			}
		}
	}
	walk(module+"agent/llm/openai", "")
	if len(seen) < 3 {
		t.Fatalf("walked only %v: the import graph was not read", seen)
	}
}
