package tools

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/tools/internal/tooltest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// await is tooltest.Await.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return tooltest.Await(t, ch, what)
}
