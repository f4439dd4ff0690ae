package subagent_test

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// watchdog bounds every wait so a deadlock fails with a goroutine dump; it
// is never an assertion about speed.
const watchdog = 30 * time.Second

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(watchdog):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting\n%s", buf[:runtime.Stack(buf, true)])
		panic("unreachable")
	}
}
