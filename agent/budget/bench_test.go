package budget_test

import (
	"testing"

	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
)

// BenchmarkBeginCharge is the accounting of one model call at the bottom
// of a three-level tree (a turn and a run per level, every level
// bounded): Begin before the call, Charge after it.
func BenchmarkBeginCharge(b *testing.B) {
	m := budget.New(budget.Limits{Tokens: 1 << 60, Turns: 1 << 60})
	for range 5 {
		m = m.Child(budget.Limits{Tokens: 1 << 60, Turns: 1 << 60})
	}
	u := llm.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	for b.Loop() {
		if err := m.Begin(); err != nil {
			b.Fatal(err)
		}
		m.Charge(u)
	}
}
