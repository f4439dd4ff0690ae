package llmtest

import (
	"context"
	"errors"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/testkit"
)

// CancelledAtText streams req from m under ctx, calls cancel at the first
// text event, and fails t unless the stream ends with context.Canceled; a
// watchdog bounds the wait.
func CancelledAtText(t testing.TB, ctx context.Context, cancel context.CancelFunc, m llm.Model, req *llm.Request) {
	t.Helper()
	var err error
	testkit.Within(t, "the cancelled stream to end", func() {
		for ev, e := range m.Stream(ctx, req) {
			if e != nil {
				err = e
				return
			}
			if ev.Kind == llm.EventText {
				cancel()
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
