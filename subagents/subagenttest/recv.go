// This file holds the wait helper the subagent tests share.

package subagenttest

import (
	"runtime"
	"testing"
	"time"
)

// Watchdog bounds every wait in the subagent tests so that a deadlock
// fails with a goroutine dump; it is never an assertion about speed.
const Watchdog = 30 * time.Second

// Recv receives from ch, failing the test with every goroutine's stack if
// nothing arrives within the Watchdog.
func Recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Watchdog):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting\n%s", buf[:runtime.Stack(buf, true)])
		panic("unreachable")
	}
}
