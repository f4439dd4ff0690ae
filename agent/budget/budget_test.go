package budget_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
)

func call(in, out int64) llm.Usage {
	return llm.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

func TestCharge_AChildChargesItselfAndEveryAncestor(t *testing.T) {
	root := budget.New(budget.Limits{})
	mid := root.Child(budget.Limits{})
	leaf := mid.Child(budget.Limits{})
	sibling := mid.Child(budget.Limits{})
	leaf.Charge(call(10, 2))
	sibling.Charge(llm.Usage{InputTokens: 5, OutputTokens: 1, TotalTokens: 6, CachedInputTokens: 3, ReasoningTokens: 1})
	mid.Charge(call(100, 20))
	want := llm.Usage{InputTokens: 115, OutputTokens: 23, TotalTokens: 138, CachedInputTokens: 3, ReasoningTokens: 1}
	if got := root.Usage(); got != want {
		t.Fatalf("root usage %+v, want %+v", got, want)
	}
	if got := mid.Usage(); got != want {
		t.Fatalf("mid usage %+v, want %+v", got, want)
	}
	if got := leaf.Usage(); got != call(10, 2) {
		t.Fatalf("leaf usage %+v: a meter is never charged what its siblings or its parent spent", got)
	}
}

func TestBegin_AnAncestorsTokenBoundStopsEveryDescendant(t *testing.T) {
	root := budget.New(budget.Limits{Tokens: 100})
	a := root.Child(budget.Limits{}).Child(budget.Limits{})
	b := root.Child(budget.Limits{})
	for i := range 4 {
		if err := a.Begin(); err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
		a.Charge(call(20, 5))
	}
	// 100 of 100 spent, by a; b never spent anything of its own.
	err := b.Begin()
	var ex *budget.ExhaustedError
	if !errors.As(err, &ex) || ex.Turns || ex.Limit != 100 || ex.Used != 100 {
		t.Fatalf("b.Begin() = %v, want the root's token bound", err)
	}
	if err.Error() != "the budget of 100 tokens ran out (100 used)" {
		t.Fatalf("message %q", err)
	}
	if err := a.Exhausted(); err == nil {
		t.Fatal("Exhausted() = nil with the root's tokens spent")
	}
}

func TestBegin_TheTurnBoundCountsRoundTripsAndARefusalTakesNone(t *testing.T) {
	root := budget.New(budget.Limits{})
	run := root.Child(budget.Limits{Turns: 3})
	turn := run.Child(budget.Limits{})
	for i := range 3 {
		if err := turn.Begin(); err != nil {
			t.Fatalf("round trip %d refused: %v", i, err)
		}
	}
	err := turn.Begin()
	var ex *budget.ExhaustedError
	if !errors.As(err, &ex) || !ex.Turns || ex.Limit != 3 {
		t.Fatalf("4th Begin = %v, want the run's turn bound", err)
	}
	if err.Error() != "the budget of 3 model requests ran out" {
		t.Fatalf("message %q", err)
	}
	if root.Turns() != 3 || run.Turns() != 3 || turn.Turns() != 3 {
		t.Fatalf("turns root %d run %d turn %d: a refused round trip must be taken from nobody", root.Turns(), run.Turns(), turn.Turns())
	}
	// The root itself is unbounded: a sibling of run still gets its turns.
	if err := root.Child(budget.Limits{}).Begin(); err != nil {
		t.Fatalf("a sibling outside the bound was refused: %v", err)
	}
}

func TestBegin_ConcurrentSiblingsNeverTakeMoreTurnsThanTheBound(t *testing.T) {
	root := budget.New(budget.Limits{Turns: 50})
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 16 {
		wg.Go(func() {
			m := root.Child(budget.Limits{}).Child(budget.Limits{})
			for range 20 {
				if m.Begin() == nil {
					mu.Lock()
					granted++
					mu.Unlock()
					m.Charge(call(1, 1))
				}
			}
		})
	}
	wg.Wait()
	if granted != 50 || root.Turns() != 50 {
		t.Fatalf("granted %d round trips, root counts %d; want exactly the bound, 50", granted, root.Turns())
	}
	if got := root.Usage().TotalTokens; got != 100 {
		t.Fatalf("root tokens %d, want 100", got)
	}
}

func TestRemaining_IsTheTightestBoundOnTheWayToTheRoot(t *testing.T) {
	root := budget.New(budget.Limits{Tokens: 1000})
	run := root.Child(budget.Limits{Tokens: 5000, Turns: 10})
	root.Child(budget.Limits{}).Charge(call(300, 0)) // a sibling spent 300 of the root's
	_ = run.Begin()
	run.Charge(call(100, 0))
	left, err := run.Child(budget.Limits{}).Remaining()
	if err != nil || left != (budget.Limits{Tokens: 600, Turns: 9}) {
		t.Fatalf("Remaining() = %+v, %v; want 600 tokens (the root's) and 9 turns (the run's)", left, err)
	}
	if left, err := budget.New(budget.Limits{}).Remaining(); err != nil || !left.IsZero() {
		t.Fatalf("an unbounded meter has %+v, %v left", left, err)
	}
	run.Charge(call(600, 0))
	if _, err := run.Remaining(); err == nil {
		t.Fatal("Remaining() of a spent budget is not an error")
	}
}

func TestTokens_CountsTheTotalElseInputAndOutput(t *testing.T) {
	m := budget.New(budget.Limits{Tokens: 10})
	m.Charge(llm.Usage{InputTokens: 6, OutputTokens: 4}) // a backend that reports no total
	if err := m.Begin(); err == nil {
		t.Fatal("10 tokens of input and output did not spend a bound of 10")
	}
}

func TestNilMeter_CountsAndBoundsNothing(t *testing.T) {
	var m *budget.Meter
	if err := m.Begin(); err != nil {
		t.Fatal(err)
	}
	m.Charge(call(1, 1))
	if m.Usage() != (llm.Usage{}) || m.Turns() != 0 || m.Exhausted() != nil {
		t.Fatal("a nil meter counted something")
	}
	if c := m.Child(budget.Limits{Tokens: 1}); c.Begin() != nil {
		t.Fatal("a nil meter's child is not a fresh root")
	}
}
