package permission

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// await waits for ch under a watchdog that dumps every goroutine.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting for %s\n%s", what, buf[:runtime.Stack(buf, true)])
	}
	panic("unreachable")
}
