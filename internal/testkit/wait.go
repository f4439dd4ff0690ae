package testkit

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// Watchdog bounds every wait of a test so that a deadlock fails the test
// with every goroutine's stack instead of stalling the run. It is never an
// assertion about speed, and long enough for a test that starts daemons
// and child processes on a loaded machine.
const Watchdog = 60 * time.Second

// Context returns a context that ends at the [Watchdog] or when the test
// ends, whichever comes first.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Watchdog)
	t.Cleanup(cancel)
	return ctx
}

// Await receives from ch; should nothing arrive before the [Watchdog], it
// fails the test with every goroutine's stack, naming what it waited for.
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
		panic(t.Name() + ": timed out waiting for " + what)
	})
	defer alarm.Stop()
	f()
}
