// This file maps a prompt turn's end onto the seam's Result: stop reasons,
// output, structured answers, and diagnostics safe to show people.

package acpprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// promptResult is the session/prompt response, read leniently: usage is
// not in every version of the schema.
type promptResult struct {
	StopReason acp.StopReason `json:"stopReason"`
	Usage      *acp.Usage     `json:"usage"`
}

// stopOf maps an ACP stop reason; a reason that is not a success carries a
// diagnostic.
func stopOf(r acp.StopReason) (subagents.StopReason, string) {
	switch r {
	case acp.StopReasonEndTurn:
		return subagents.StopCompleted, ""
	case acp.StopReasonCancelled:
		return subagents.StopAborted, ""
	case acp.StopReasonMaxTokens:
		return subagents.StopMaxTokens, ""
	case acp.StopReasonRefusal:
		return subagents.StopRefusal, ""
	case acp.StopReasonMaxTurnRequests:
		return subagents.StopError, "the agent reached its limit of model requests for one task before it finished"
	}
	return subagents.StopError, fmt.Sprintf("the agent ended with an unknown stop reason %q", runkit.Cut(string(r), 64))
}

func usageOf(u *acp.Usage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens), TotalTokens: int64(u.TotalTokens)}
	if u.ThoughtTokens != nil {
		out.ReasoningTokens = int64(*u.ThoughtTokens)
	}
	if u.CachedReadTokens != nil {
		out.CachedInputTokens = int64(*u.CachedReadTokens)
	}
	return out
}

// metaUsage is the _meta key under which a dshd agent's usage_update
// carries the token usage of the model call it follows.
const metaUsage = "dshd.dev/usage"

// usageTally is a run's token usage as the agent's usage_updates tell it,
// for an agent whose prompt response has none: the sum of the per-call
// usage a dshd agent attaches, else (any other agent) how far the context
// grew since the child's previous run ended — the only count a plain
// usage_update has.
type usageTally struct {
	before   uint64 // the context at the end of the child's previous run
	calls    llm.Usage
	perCall  bool
	lastUsed uint64
	sawUsed  bool
}

func (t *usageTally) add(u *acp.UsageUpdate) {
	t.lastUsed, t.sawUsed = u.Used, true
	v, ok := u.Meta[metaUsage]
	if !ok {
		return
	}
	b, err := json.Marshal(v)
	var call acp.Usage
	if err != nil || json.Unmarshal(b, &call) != nil {
		return
	}
	t.calls.Add(usageOf(&call))
	t.perCall = true
}

// total is the run's usage.
func (t *usageTally) total() llm.Usage {
	switch {
	case t.perCall:
		return t.calls
	case t.sawUsed && t.lastUsed > t.before:
		return llm.Usage{TotalTokens: int64(t.lastUsed - t.before)}
	}
	return llm.Usage{}
}

// wireMessage is a peer error's message and, when it has one, the reason
// in its data, scrubbed.
func wireMessage(err error) string {
	var ae *acp.Error
	if !errors.As(err, &ae) {
		return scrub(runkit.FirstLine(err.Error()))
	}
	return runkit.Cut(scrub(runkit.FirstLine(ae.Reason())), 600) + fmt.Sprintf(" (code %d)", ae.Code)
}

// scrub hides what could be a credential in text the agent or its
// process wrote.
func scrub(s string) string { return runkit.ScrubOutput(s) }

// scrubTail is the last n bytes of a process's output, scrubbed, starting
// on a line when it can.
func scrubTail(s string, n int) string {
	s = strings.TrimRight(s, "\n\r\t ")
	if len(s) > n {
		s = s[len(s)-n:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = scrub(l)
	}
	return strings.Join(lines, "\n")
}
