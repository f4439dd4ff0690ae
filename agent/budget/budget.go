// This file implements the Meter: the counters, their bounds, and what is
// left of them for a child in another process.

package budget

import (
	"fmt"
	"sync/atomic"

	"github.com/dshd/dshd/agent/llm"
)

// Limits bound a meter together with everything below it. A zero field is
// unbounded.
type Limits struct {
	// Tokens bounds the tokens charged (a call's total tokens, else its
	// input and output).
	Tokens int64 `json:"tokens,omitempty"`
	// Turns bounds the model round trips begun.
	Turns int64 `json:"turns,omitempty"`
}

// IsZero reports whether l bounds nothing.
func (l Limits) IsZero() bool { return l.Tokens <= 0 && l.Turns <= 0 }

// Meter counts the usage of one node of a delegation tree and of every
// node below it. Its methods are safe for concurrent use and accept a nil
// Meter, which counts and bounds nothing.
type Meter struct {
	parent *Meter
	limits Limits

	turns     atomic.Int64
	tokens    atomic.Int64
	input     atomic.Int64
	output    atomic.Int64
	total     atomic.Int64
	cached    atomic.Int64
	reasoning atomic.Int64
}

// New returns a root meter bounded by l.
func New(l Limits) *Meter { return &Meter{limits: l} }

// Child returns a meter below m bounded by l: what it is charged, m and
// m's ancestors are charged too, and their bounds bind it. A nil m gives
// a root.
func (m *Meter) Child(l Limits) *Meter { return &Meter{parent: m, limits: l} }

// ExhaustedError says which bound ran out.
type ExhaustedError struct {
	// Turns is set when the bound on model round trips ran out, else it
	// was the bound on tokens.
	Turns bool
	// Limit is the bound; Used what was spent against it.
	Limit, Used int64
}

func (e *ExhaustedError) Error() string {
	if e.Turns {
		return fmt.Sprintf("the budget of %d model requests ran out", e.Limit)
	}
	return fmt.Sprintf("the budget of %d tokens ran out (%d used)", e.Limit, e.Used)
}

// Begin takes one model round trip from m and every ancestor. It refuses,
// taking nothing, with an [*ExhaustedError] when any of them has spent its
// tokens or would exceed its round trips.
func (m *Meter) Begin() error {
	for n := m; n != nil; n = n.parent {
		if l := n.limits.Tokens; l > 0 {
			if used := n.tokens.Load(); used >= l {
				return &ExhaustedError{Limit: l, Used: used}
			}
		}
	}
	for n := m; n != nil; n = n.parent {
		if t := n.turns.Add(1); n.limits.Turns > 0 && t > n.limits.Turns {
			for u := m; ; u = u.parent {
				u.turns.Add(-1)
				if u == n {
					break
				}
			}
			return &ExhaustedError{Turns: true, Limit: n.limits.Turns, Used: n.limits.Turns}
		}
	}
	return nil
}

// Charge adds one call's usage (or a child's, reported from elsewhere) to
// m and every ancestor.
func (m *Meter) Charge(u llm.Usage) {
	tokens := Tokens(u)
	for n := m; n != nil; n = n.parent {
		n.tokens.Add(tokens)
		n.input.Add(u.InputTokens)
		n.output.Add(u.OutputTokens)
		n.total.Add(u.TotalTokens)
		n.cached.Add(u.CachedInputTokens)
		n.reasoning.Add(u.ReasoningTokens)
	}
}

// Tokens is what a usage counts against a token bound: its total, else
// its input and output.
func Tokens(u llm.Usage) int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.InputTokens + u.OutputTokens
}

// Usage returns what m and everything below it were charged.
func (m *Meter) Usage() llm.Usage {
	if m == nil {
		return llm.Usage{}
	}
	return llm.Usage{
		InputTokens:       m.input.Load(),
		OutputTokens:      m.output.Load(),
		TotalTokens:       m.total.Load(),
		CachedInputTokens: m.cached.Load(),
		ReasoningTokens:   m.reasoning.Load(),
	}
}

// Turns returns the model round trips begun below m.
func (m *Meter) Turns() int64 {
	if m == nil {
		return 0
	}
	return m.turns.Load()
}

// Exhausted returns an [*ExhaustedError] when the tokens of m or an
// ancestor have run out, or the round trips of one have all been taken;
// nil otherwise.
func (m *Meter) Exhausted() error {
	_, err := m.Remaining()
	return err
}

// Remaining is what m may still spend, the tightest of its own bounds and
// every ancestor's, for a child that enforces it elsewhere (a child dshd
// process). A zero field is unbounded. When something has run out it
// returns an [*ExhaustedError] instead.
func (m *Meter) Remaining() (Limits, error) {
	var left Limits
	for n := m; n != nil; n = n.parent {
		if l := n.limits.Tokens; l > 0 {
			used := n.tokens.Load()
			if used >= l {
				return Limits{}, &ExhaustedError{Limit: l, Used: used}
			}
			if r := l - used; left.Tokens == 0 || r < left.Tokens {
				left.Tokens = r
			}
		}
		if l := n.limits.Turns; l > 0 {
			used := n.turns.Load()
			if used >= l {
				return Limits{}, &ExhaustedError{Turns: true, Limit: l, Used: used}
			}
			if r := l - used; left.Turns == 0 || r < left.Turns {
				left.Turns = r
			}
		}
	}
	return left, nil
}
