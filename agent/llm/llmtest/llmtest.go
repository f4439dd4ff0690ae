package llmtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// Watchdog panics, with every goroutine's stack, when the test still runs
// 20 s from now: a blocked stream fails loudly instead of at the test
// binary's timeout. It is never an assertion about speed. Call the
// returned stop when the wait is over.
func Watchdog(t testing.TB) (stop func()) {
	tm := time.AfterFunc(20*time.Second, func() {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		panic(fmt.Sprintf("%s: stuck; goroutines:\n%s", t.Name(), buf[:n]))
	})
	return func() { tm.Stop() }
}

// CancelledAtText streams req from m under ctx, calls cancel at the first
// text event, and fails t unless the stream ends with context.Canceled; a
// watchdog bounds the wait.
func CancelledAtText(t testing.TB, ctx context.Context, cancel context.CancelFunc, m llm.Model, req *llm.Request) {
	t.Helper()
	defer Watchdog(t)()
	var err error
	for ev, e := range m.Stream(ctx, req) {
		if e != nil {
			err = e
			break
		}
		if ev.Kind == llm.EventText {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
