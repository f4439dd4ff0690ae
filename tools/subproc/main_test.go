package subproc

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// watchdog bounds every wait so a deadlock fails with a goroutine dump; it
// is never an assertion about speed.
const watchdog = 20 * time.Second

// within runs f and fails the test with a goroutine dump if it does not
// return in time.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(watchdog):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out: %s\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}
