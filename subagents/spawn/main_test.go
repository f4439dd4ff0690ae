package spawn_test

import (
	"testing"

	"go.uber.org/goleak"

	st "github.com/dshd/dshd/subagents/subagenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	return st.Recv(t, ch)
}
