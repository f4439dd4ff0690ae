package localrun

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/tools/internal/tooltest"
	"github.com/dshd/dshd/tools/sandbox"
)

// await is tooltest.Await.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return tooltest.Await(t, ch, what)
}

// The test binary is also the sandbox's helper (the TestMain trick): a
// sandboxed command re-executes it as `sandbox POLICY -- ARGV`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox" {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	// A race-enabled helper otherwise sleeps a second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	goleak.VerifyTestMain(m)
}
