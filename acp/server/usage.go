// This file turns token usage into ACP's Usage: a turn's, in the prompt
// response (unstable, rfd:end-turn-token-usage), and a subagent's, in its
// idle state.

package server

import (
	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
)

// turnUsage is the usage of a prompt response: the turn's model calls as
// the agent counted them in its result (agent.Result.Usage, compaction
// summaries included). That result is the one source: whatever adds to
// the turn's usage (its subagents' runs, for one) adds to it, and the
// response follows. Nil when the turn made no model call that reported
// usage.
func turnUsage(res agent.Result) *acp.Usage { return usageOf(res.Usage) }

// usageOf is WireUsage, or nil when nothing was counted.
func usageOf(u llm.Usage) *acp.Usage {
	if u == (llm.Usage{}) {
		return nil
	}
	return WireUsage(u)
}

// WireUsage is the one mapping of token counts onto ACP's Usage (also of
// the subagents' usage `dshd prompt --json` prints), zeros included (a
// usage_update's _meta carries them all). A total the backend did not
// report is input plus output; cached input is a cache read; dshd's
// backends report no cache writes.
func WireUsage(u llm.Usage) *acp.Usage {
	out := &acp.Usage{TotalTokens: nonNegative(u.TotalTokens), InputTokens: nonNegative(u.InputTokens), OutputTokens: nonNegative(u.OutputTokens)}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	if u.ReasoningTokens > 0 {
		n := uint64(u.ReasoningTokens)
		out.ThoughtTokens = &n
	}
	if u.CachedInputTokens > 0 {
		n := uint64(u.CachedInputTokens)
		out.CachedReadTokens = &n
	}
	return out
}

func nonNegative(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}
