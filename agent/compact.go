// This file compacts a conversation that outgrows the model's context
// window: older turns are summarised by the model and replaced by the
// summary.

package agent

import (
	"fmt"
	"strings"

	"github.com/dshd/dshd/agent/llm"
)

const defaultCompactPrompt = `You are summarising the earlier part of a conversation between a user and a coding agent so that the agent can continue the work with less context. Write a concise but complete summary: the user's goals and constraints, decisions made, files read or changed (with paths), commands run and their outcomes, open questions, and what remains to be done. Do not invent anything. Answer with the summary only.`

// compactThreshold is the share of the context window above which older
// turns are compacted before the next model call.
const compactThreshold = 0.8

// maxTranscriptMessage caps each message in the transcript given to the
// summariser, so one huge tool output cannot crowd out the rest.
const maxTranscriptMessage = 4000

// estimateTokens estimates a message's tokens. It is a variable so a test
// can count which messages are estimated (export_test.go).
var estimateTokens = charEstimate

// charEstimate is a cheap upper-ish estimate of a message's tokens.
func charEstimate(m llm.Message) int64 {
	n := len(m.Content) + 16
	if m.Reasoning != nil {
		n += len(*m.Reasoning)
	}
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	return int64(n/4 + 1)
}

// maybeCompact summarises the completed turns when the context is nearly
// full. It does nothing when there are no completed turns to summarise.
func (t *turn) maybeCompact() error {
	a := t.a
	a.mu.Lock()
	start := a.turnStart
	est := int64(len(t.system)/4) + a.hist.Estimate()
	if a.lastUsed > est {
		est = a.lastUsed
	}
	var older []llm.Message
	if start > 0 && float64(est) > compactThreshold*float64(a.opts.ContextWindow) {
		p := a.hist.Prefix(start)
		older = p.Messages()
	}
	a.mu.Unlock()
	if older == nil {
		return nil
	}

	id := a.newID("cmp")
	t.emit(CompactionStarted{ID: id})
	summary, err := t.summarise(older)
	if err != nil {
		t.emit(CompactionEnded{ID: id, Failure: err.Error(), Cancelled: t.ctx.Err() != nil})
		return fmt.Errorf("agent: compacting the conversation: %w", err)
	}
	t.emit(CompactionEnded{ID: id, Summary: summary})
	a.mu.Lock()
	current := a.hist.Messages()[start:]
	kept := append([]llm.Message{{Role: llm.RoleUser, Content: "Summary of the earlier conversation (older turns were compacted):\n\n" + summary}}, current...)
	a.hist = NewHistory(kept...)
	a.turnStart = 1
	a.lastUsed = 0
	a.mu.Unlock()
	a.log.Info("conversation compacted", "messages_before", len(older)+len(current), "messages_after", len(kept))
	if a.opts.OnReset != nil {
		a.opts.OnReset(append([]llm.Message(nil), kept...))
	}
	return nil
}

// summarise asks the model for a summary of msgs, rendered as a plain
// transcript so that the request fits even when msgs do not.
func (t *turn) summarise(msgs []llm.Message) (string, error) {
	return t.summariseWith(msgs, t.a.opts.CompactPrompt)
}

// summariseWith is summarise with the summariser's instruction given.
func (t *turn) summariseWith(msgs []llm.Message, instruction string) (string, error) {
	a := t.a
	budget := a.opts.ContextWindow * 2 // characters, about half the window in tokens
	var b strings.Builder
	for _, m := range msgs {
		line := transcriptLine(m)
		if b.Len()+len(line) > budget {
			b.WriteString("[… the rest of the older conversation is omitted …]\n")
			break
		}
		b.WriteString(line)
	}
	req := &llm.Request{
		Model:     a.ModelID(),
		System:    instruction,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		MaxTokens: a.opts.MaxTokens,
	}
	msg, usage, _, err := llm.Collect(a.opts.Model.Stream(t.ctx, req))
	t.meter.Charge(usage)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(msg.Content) == "" {
		return "", fmt.Errorf("the model returned an empty summary")
	}
	return msg.Content, nil
}

func transcriptLine(m llm.Message) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(string(m.Role)))
	b.WriteString(": ")
	b.WriteString(truncate(m.Content, maxTranscriptMessage))
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, "\n[calls %s %s]", c.Name, truncate(c.Arguments, maxTranscriptMessage/4))
	}
	b.WriteString("\n\n")
	return b.String()
}
