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
			w.m.requests.WithLabelValues(outcome).Inc()
			w.m.reqSeconds.Observe(time.Since(start).Seconds())
		}()
		for ev, err := range w.inner.Stream(ctx, req) {
			if first {
				first = false
				w.m.firstToken.Observe(time.Since(start).Seconds())
			}
			switch {
			case err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil):
				outcome = "cancelled"
			case err != nil:
				outcome = "error"
				w.m.errors.WithLabelValues("model").Inc()
			case ev.Kind == llm.EventUsage && ev.Usage != nil:
				u := ev.Usage
				w.m.tokens.WithLabelValues("input").Add(float64(u.InputTokens))
				w.m.tokens.WithLabelValues("output").Add(float64(u.OutputTokens))
				w.m.tokens.WithLabelValues("cached_input").Add(float64(u.CachedInputTokens))
				w.m.tokens.WithLabelValues("reasoning").Add(float64(u.ReasoningTokens))
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
