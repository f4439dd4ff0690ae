// This file holds the wait helper the subagent tests share.

package subagenttest

import (
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// Recv receives from ch, failing the test with every goroutine's stack if
// nothing arrives within the module's test watchdog ([testkit.Await]).
func Recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	return testkit.Await(t, ch, "a value on the channel")
}
