// Package tooltest holds the test helpers the tools packages share. They
// are the module's test kit (internal/testkit) under the names the tools
// tests have always called: files in a temporary tree, and the one
// watchdog with a wait and a block run under it.
package tooltest

import (
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// Write creates dir/rel (slash-separated) with content, and its parents,
// and returns its path.
func Write(t testing.TB, dir, rel, content string) string {
	t.Helper()
	return testkit.Write(t, dir, rel, content)
}

// Read returns the content of dir/rel.
func Read(t testing.TB, dir, rel string) string {
	t.Helper()
	return testkit.Read(t, dir, rel)
}

// Watchdog bounds every wait of the tools tests: [testkit.Watchdog].
const Watchdog = testkit.Watchdog

// Await waits for ch under the [Watchdog], which dumps every goroutine.
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return testkit.Await(t, ch, what)
}

// Within runs f under the [Watchdog]; see [testkit.Within].
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	testkit.Within(t, what, f)
}
