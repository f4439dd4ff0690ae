// model.go: a model wrapper that counts requests, their latency, tokens
// and failures.

package metrics

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// Model wraps inner so that every request it streams is counted. The
// stream is passed through unchanged.
func (m *Metrics) Model(inner llm.Model) llm.Model { return &model{m: m, inner: inner} }

type model struct {
	m     *Metrics
	inner llm.Model
}

var _ llm.ThinkingSwitch = (*model)(nil)

// ThinkingSwitch passes the inner model's answer through, so the wrapper
// does not hide the thinking config option; a backend without the switch
// reports it cannot.
func (w *model) ThinkingSwitch() (on, ok bool) {
	if sw, isSwitch := w.inner.(llm.ThinkingSwitch); isSwitch {
		return sw.ThinkingSwitch()
	}
	return false, false
}

func (w *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		start := time.Now()
		first := true
		outcome := "ok"
		defer func() {
			w.m.requests.with(outcome).inc()
			w.m.reqSeconds.observe(time.Since(start).Seconds())
		}()
		for ev, err := range w.inner.Stream(ctx, req) {
			if first {
				first = false
				w.m.firstToken.observe(time.Since(start).Seconds())
			}
			switch {
			case err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil):
				outcome = "cancelled"
			case err != nil:
				outcome = "error"
				w.m.errors.with("model").inc()
			case ev.Kind == llm.EventUsage && ev.Usage != nil:
				u := ev.Usage
				w.m.addTokens("input", u.InputTokens)
				w.m.addTokens("output", u.OutputTokens)
				w.m.addTokens("cached_input", u.CachedInputTokens)
				w.m.addTokens("reasoning", u.ReasoningTokens)
			}
			if !yield(ev, err) {
				if outcome == "ok" && ctx.Err() != nil {
					outcome = "cancelled"
				}
				return
			}
		}
	}
}

// addTokens counts n tokens of a kind. Every kind shows once a usage
// report came, also at 0; a negative count, which no backend should
// report, is not one to add to a counter.
func (m *Metrics) addTokens(kind string, n int64) {
	c := m.tokens.with(kind)
	if n > 0 {
		c.add(uint64(n))
	}
}
