package openai

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/llmtest"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is one client against one fake server. Retry waits are recorded
// instead of slept, so retry tests are instant and can check the delays.
type harness struct {
	t   *testing.T
	srv *openaitest.Server
	c   *Client

	mu     sync.Mutex
	sleeps []time.Duration
}

func newHarness(t *testing.T, mod func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, srv: openaitest.New()}
	t.Cleanup(h.srv.Close)
	o := DeepSeek()
	o.BaseURL = h.srv.URL()
	o.APIKey = "sk-test-secret-key"
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		h.mu.Lock()
		h.sleeps = append(h.sleeps, d)
		h.mu.Unlock()
		return ctx.Err()
	}
	t.Cleanup(c.CloseIdleConnections)
	h.c = c
	return h
}

func (h *harness) recordedSleeps() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.sleeps...)
}

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		{Role: llm.RoleUser, Content: text},
	}}
}

// run collects every event of one call under a watchdog that dumps the
// goroutines if the call hangs.
func (h *harness) run(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
	h.t.Helper()
	return llmtest.Drain(h.t, h.c.Stream(ctx, req))
}

func collect(t *testing.T, evs []llm.Event) (llm.Message, llm.Usage, llm.FinishReason) {
	t.Helper()
	msg, u, fr, err := llm.Collect(func(yield func(llm.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	return msg, u, fr
}

func kinds(evs []llm.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventText:
			b.WriteString("T")
		case llm.EventReasoning:
			b.WriteString("R")
		case llm.EventToolCall:
			b.WriteString("C")
		case llm.EventUsage:
			b.WriteString("U")
		case llm.EventFinish:
			b.WriteString("F")
		}
	}
	return b.String()
}

func apiError(t *testing.T, err error) *llm.APIError {
	t.Helper()
	var e *llm.APIError
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.APIError", err, err)
	}
	return e
}
