// Package tooltest holds the test helpers the tools packages share: files
// in a temporary tree, and a wait under a watchdog. It imports nothing of
// the project.
package tooltest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Write creates dir/rel (slash-separated) with content, and its parents,
// and returns its path.
func Write(t testing.TB, dir, rel, content string) string {
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

// Read returns the content of dir/rel.
func Read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Await waits for ch under a watchdog (a deadlock guard, not a timing
// assertion) that dumps every goroutine. The guard is long enough for a
// test that starts servers on a loaded machine (tools/mcp's).
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting for %s\n%s", what, buf[:runtime.Stack(buf, true)])
	}
	panic("unreachable")
}
