package llmtest

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/testkit"
)

// Drain collects the events of stream up to its end or its first error,
// which it returns; a stream that blocks fails the test with every
// goroutine's stack (testkit.Within).
func Drain(t testing.TB, stream iter.Seq2[llm.Event, error]) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	var err error
	testkit.Within(t, "the stream to end", func() {
		for ev, e := range stream {
			if e != nil {
				err = e
				return
			}
			evs = append(evs, ev)
		}
	})
	return evs, err
}

// CancelledAtText streams req from m under ctx, calls cancel at the first
// text event, and fails t unless the stream ends with context.Canceled; a
// watchdog bounds the wait.
func CancelledAtText(t testing.TB, ctx context.Context, cancel context.CancelFunc, m llm.Model, req *llm.Request) {
	t.Helper()
	stream := m.Stream(ctx, req)
	_, err := Drain(t, func(yield func(llm.Event, error) bool) {
		for ev, e := range stream {
			if e == nil && ev.Kind == llm.EventText {
				cancel()
			}
			if !yield(ev, e) {
				return
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
