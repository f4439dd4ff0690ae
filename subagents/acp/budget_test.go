//go:build unix

package acpprovider_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

func TestBudget_WhatIsLeftTravelsToTheAgentInSessionNewMeta(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	turn := budget.New(budget.Limits{Tokens: 300})
	turn.Charge(llm.Usage{TotalTokens: 50})
	run := start(t, p, subagents.StartRequest{Prompt: "session", Parent: parent.Scope, Options: fakeBinding(modeAgent),
		Meter: turn, Budget: subagents.Budget{MaxTokens: 500, MaxTurns: 7}})
	res := wait(t, run)
	var got struct {
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	// The turn above has 250 of its 300 left, less than the binding's 500.
	if got.Meta["dshd.dev/maxTokens"] != float64(250) || got.Meta["dshd.dev/maxTurns"] != float64(7) {
		t.Fatalf("session/new _meta %v, want maxTokens 250 and maxTurns 7", got.Meta)
	}
}

func TestBudget_TheParentStopsAnAgentThatSpendsPastItsBudget(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	turn := budget.New(budget.Limits{})
	run := start(t, p, subagents.StartRequest{Prompt: "spend 10", Parent: parent.Scope, Options: fakeBinding(modeAgent),
		Meter: turn, Budget: subagents.Budget{MaxTokens: 100}})
	res := wait(t, run)
	if res.StopReason != subagents.StopMaxTokens || !res.OutOfBudget || !strings.HasPrefix(res.Diagnostic, "the budget of 100 tokens ran out") {
		t.Fatalf("result %+v, want max-tokens out of the budget of 100", res)
	}
	// The agent does not know the budget: the parent cancelled it once its
	// reports reached 100, and the calls already reported are counted.
	if !strings.HasPrefix(res.Output, "call ") || res.Output == "call 1000" {
		t.Fatalf("partial output %q", res.Output)
	}
	spent := turn.Usage()
	if spent.TotalTokens < 100 || spent.TotalTokens >= 10000 || spent != res.Usage {
		t.Fatalf("the turn above was charged %+v and the run reports %+v, want the same, at least 100 tokens", spent, res.Usage)
	}
}

func TestBudget_AnExhaustedBudgetStartsNoAgent(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	sentinel := filepath.Join(t.TempDir(), "spawned")
	turn := budget.New(budget.Limits{Tokens: 100})
	turn.Charge(llm.Usage{TotalTokens: 100})
	run := start(t, p, subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Meter: turn,
		Options: map[string]string{"command": "touch", "args": quote(sentinel)}})
	res := wait(t, run)
	if res.StopReason != subagents.StopMaxTokens || !res.OutOfBudget || res.Diagnostic != "the budget of 100 tokens ran out (100 used)" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(sentinel); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran: %v", err)
	}
	checkNoProcesses(t)
}
