// This file holds a child's budget: what is left of it travels to the
// agent in session/new _meta, which a child dshd enforces, and what the
// agent reports spending is charged to the run's meter as it arrives, so
// the parent stops an agent that spends past it, dshd or not.

package acpprovider

import (
	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

// _meta keys of session/new that carry what is left of the budgets above
// a child; a child dshd bounds the session by them (acp/server/build.go).
const (
	metaMaxTokens = "dshd.dev/maxTokens"
	metaMaxTurns  = "dshd.dev/maxTurns"
)

// budgetMeta adds what is left of the budgets above a child to a
// session/new _meta.
func budgetMeta(meta acp.Meta, left budget.Limits) {
	if left.Tokens > 0 {
		meta[metaMaxTokens] = left.Tokens
	}
	if left.Turns > 0 {
		meta[metaMaxTurns] = left.Turns
	}
}

// charge adds what the agent reported since the last charge to the run's
// meter and, once a budget on the way to the root has run out, stops the
// agent: its turn ends and the run with it, out of budget.
func (r *run) charge(news llm.Usage) {
	if news == (llm.Usage{}) {
		return
	}
	r.c.meter.Charge(news)
	if r.c.meter.Exhausted() != nil {
		r.budgetRanOut()
	}
}

// settle charges the meter whatever of the run's usage so far it was not
// charged as the agent reported it (the prompt response's count, or what
// no usage_update carried).
func (r *run) settle(runUsage llm.Usage) {
	r.mu.Lock()
	news := atLeastZero(runUsage.Since(r.usage.charged))
	r.usage.charged.Add(news)
	r.mu.Unlock()
	r.c.meter.Charge(news)
}

// budgetRanOut stops the agent once: session/cancel, and after the cancel
// grace the run stops waiting for its answer.
func (r *run) budgetRanOut() {
	if r.spent.Swap(true) || r.Ended() {
		return
	}
	r.c.log.Info("the child's budget ran out; stopping it", "err", r.c.meter.Exhausted())
	r.stop()
}

// outOfBudget marks a result that ended because a budget ran out: the
// parent stopped the agent for it, or the agent stopped at its limit (a
// child dshd enforcing what it was given) with the budget spent.
func (r *run) outOfBudget(res *subagents.Result) {
	if res.StopReason == subagents.StopCompleted || r.cancelled.Load() {
		return
	}
	err := r.c.meter.Exhausted()
	if err == nil || !(r.spent.Load() || res.StopReason == subagents.StopMaxTokens) {
		return
	}
	res.StopReason, res.OutOfBudget, res.Diagnostic = subagents.StopMaxTokens, true, err.Error()
}

func atLeastZero(u llm.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:       max(u.InputTokens, 0),
		OutputTokens:      max(u.OutputTokens, 0),
		TotalTokens:       max(u.TotalTokens, 0),
		CachedInputTokens: max(u.CachedInputTokens, 0),
		ReasoningTokens:   max(u.ReasoningTokens, 0),
	}
}
