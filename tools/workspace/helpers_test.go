package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// mustNew returns the workspace of dir, failing the test on an error.
func mustNew(t testing.TB, dir string, additional ...string) *Workspace {
	t.Helper()
	ws, err := New(dir, additional)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// write creates dir/rel with content, and its parents.
func write(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// read returns the content of dir/rel.
func read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
