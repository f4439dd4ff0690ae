// Package tooltest holds the test helpers the tools packages share: files
// in a temporary tree, and the one watchdog with a wait and a block run
// under it. It imports nothing of the project.
package tooltest

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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

// Watchdog bounds every wait of the tools tests so that a deadlock fails
// with a goroutine dump; it is never an assertion about speed, and long
// enough for a test that starts servers on a loaded machine.
const Watchdog = 30 * time.Second

// Await waits for ch under the [Watchdog], which dumps every goroutine.
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Watchdog):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting for %s\n%s", what, buf[:runtime.Stack(buf, true)])
	}
	panic("unreachable")
}

// Within runs f; should it not return before the [Watchdog], the test
// binary panics with every goroutine's stack, the way a deadlock is best
// read (f may be blocked where no test can fail it).
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	alarm := time.AfterFunc(Watchdog, func() {
		debug.SetTraceback("all")
		panic("timed out waiting for " + what)
	})
	defer alarm.Stop()
	f()
}
