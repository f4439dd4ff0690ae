// This file maps a prompt turn's end onto the seam's Result: stop reasons,
// output, structured answers, and diagnostics safe to show people.

package acpprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/utf8cut"
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

// _meta keys under which a dshd agent's usage_update carries the token
// usage of the model call it follows, and its running turn's usage so
// far with everything that turn delegated (acp/server/translate.go).
const (
	metaUsage     = "dshd.dev/usage"
	metaTurnUsage = "dshd.dev/turnUsage"
)

// usageTally is a run's token usage as the agent's usage_updates tell it:
// the turn's running count a dshd agent attaches, its subagents' spending
// included; else the sum of the per-call usage an older dshd attaches;
// else (any other agent) how far the context grew since the child's
// previous run ended — the only count a plain usage_update has.
type usageTally struct {
	before   uint64 // the context at the end of the child's previous run
	calls    llm.Usage
	perCall  bool
	done     llm.Usage // the run's finished prompts, by their turn counts
	turn     llm.Usage // the prompt in progress, as last reported
	perTurn  bool
	lastUsed uint64
	sawUsed  bool
	// charged is what the run's meter was charged so far.
	charged llm.Usage
}

// add takes in one usage_update and returns what it adds to the run's
// count: the part the run's meter has yet to be charged.
func (t *usageTally) add(u *acp.UsageUpdate) llm.Usage {
	t.lastUsed, t.sawUsed = u.Used, true
	if turn, ok := metaCount(u.Meta, metaTurnUsage); ok {
		news := atLeastZero(turn.Since(t.turn))
		t.turn, t.perTurn = turn, true
		if call, ok := metaCount(u.Meta, metaUsage); ok {
			t.calls.Add(call)
			t.perCall = true
		}
		t.charged.Add(news)
		return news
	}
	call, ok := metaCount(u.Meta, metaUsage)
	if !ok {
		return llm.Usage{}
	}
	t.calls.Add(call)
	t.perCall = true
	t.charged.Add(call)
	return call
}

// metaCount reads a usage object under key.
func metaCount(meta acp.Meta, key string) (llm.Usage, bool) {
	v, ok := meta[key]
	if !ok {
		return llm.Usage{}, false
	}
	b, err := json.Marshal(v)
	var u acp.Usage
	if err != nil || json.Unmarshal(b, &u) != nil {
		return llm.Usage{}, false
	}
	return usageOf(&u), true
}

// endPrompt closes the prompt in progress: the next one's turn count
// starts again from zero.
func (t *usageTally) endPrompt() {
	t.done.Add(t.turn)
	t.turn = llm.Usage{}
}

// total is the run's usage.
func (t *usageTally) total() llm.Usage {
	switch {
	case t.perTurn:
		u := t.done
		u.Add(t.turn)
		return u
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
		s = utf8cut.TrimPartial(s[len(s)-n:])
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
