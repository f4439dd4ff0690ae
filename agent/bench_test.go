package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
)

// callsPerTurn is how many model calls a turn of roundTripModel makes.
const callsPerTurn = 10

// roundTripModel asks for a tool that does no work in every call of a turn
// but the last, which answers; with usage set, every call reports it.
func roundTripModel(usage *llm.Usage) *funcModel {
	return &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if step(req) < callsPerTurn-1 {
			evs := toolCalls(llm.ToolCall{ID: "c", Name: "echo", Arguments: `{"text":"x"}`})
			if usage != nil {
				evs = append([]llm.Event{{Kind: llm.EventUsage, Usage: usage}}, evs...)
			}
			return evs, nil
		}
		return text("done"), nil
	}}
}

// benchRoundTrips runs turns of m, each on a fresh agent under the meter
// meter returns, and reports the cost per model call.
func benchRoundTrips(b *testing.B, m llm.Model, meter func() *budget.Meter) {
	emit := func(agent.Event) {}
	b.ReportAllocs()
	calls := 0
	for b.Loop() {
		// A fresh history per turn keeps the cost independent of b.N.
		a := agent.New(agent.Options{ID: "bench", Model: m, Meter: meter(), Tools: toolSet{"echo": &echoTool{name: "echo"}}})
		if _, err := a.Prompt(context.Background(), agent.Input{Text: "go"}, emit); err != nil {
			b.Fatal(err)
		}
		a.Close()
		calls += callsPerTurn
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls)/1000, "µs/model-call")
}

// BenchmarkModelRoundTrip measures the loop's own cost per model round
// trip: one model call that asks for a tool, the tool's result going back,
// and the next call, with a model and a tool that do no work. The figure is
// per model call.
func BenchmarkModelRoundTrip(b *testing.B) {
	benchRoundTrips(b, roundTripModel(nil), func() *budget.Meter { return nil })
}

// BenchmarkModelRoundTripAccounting is BenchmarkModelRoundTrip with a
// model that reports usage on every call, so each round trip is counted:
// "unbounded" is every turn's accounting (a meter of its own, no bound);
// "budget" is the deepest turn of a three-level tree, its meter under five
// bounded ancestors (a run and a turn per level above, with a binding's
// max-tokens and max-turns and a --max-tokens-per-turn), each checked
// before every call and charged after it.
func BenchmarkModelRoundTripAccounting(b *testing.B) {
	m := roundTripModel(&llm.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110})
	for _, bc := range []struct {
		name  string
		meter func() *budget.Meter
	}{
		{"unbounded", func() *budget.Meter { return nil }},
		{"budget", func() *budget.Meter {
			big := budget.Limits{Tokens: 1 << 60, Turns: 1 << 60}
			m := budget.New(budget.Limits{Tokens: 1 << 60})
			for range 4 {
				m = m.Child(big)
			}
			return m
		}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchRoundTrips(b, m, bc.meter) })
	}
}

// BenchmarkCancelLatency measures the time from cancelling a turn — a model
// stream that is waiting for its next token and a tool that is running —
// to Prompt returning with the cancelled stop reason after its last event.
func BenchmarkCancelLatency(b *testing.B) {
	started := make(chan struct{}, 1)
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if step(req) == 0 {
			return toolCalls(llm.ToolCall{ID: "c", Name: "echo", Arguments: `{}`}), nil
		}
		return text("unreachable"), nil
	}}
	block := make(chan struct{})
	echo := &echoTool{name: "echo", block: block}
	var total time.Duration
	for b.Loop() {
		a := agent.New(agent.Options{ID: "bench", Model: m, Tools: toolSet{"echo": echo}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan time.Time)
		go func() {
			_, _ = a.Prompt(ctx, agent.Input{Text: "go"}, func(e agent.Event) {
				if u, ok := e.(agent.ToolCallUpdated); ok && u.Status == agent.ToolInProgress {
					started <- struct{}{}
				}
			})
			done <- time.Now()
		}()
		<-started
		t0 := time.Now()
		cancel()
		total += (<-done).Sub(t0)
		a.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/cancel")
}
