// This file holds a deterministic model driven by a function.

package subagenttest

import (
	"context"
	"iter"
	"strings"

	"github.com/dshd/dshd/agent/llm"
)

// Reply is one scripted model response.
type Reply struct {
	// Text and Reasoning are streamed in one piece each.
	Text      string
	Reasoning string
	ToolCalls []llm.ToolCall
	// Finish defaults to tool_calls when ToolCalls is set, stop otherwise.
	Finish llm.FinishReason
	// Usage, when set, is reported before the finish.
	Usage *llm.Usage
	// Err ends the stream with this error (after Text, if any).
	Err error
	// Block, when set, is waited for (or ctx) before anything streams.
	Block <-chan struct{}
	// Panic, when non-nil, is raised inside Stream.
	Panic any
}

// Model is an [llm.Model] that answers each request with fn's reply.
type Model func(ctx context.Context, req *llm.Request) Reply

var _ llm.Model = Model(nil)

// Stream implements [llm.Model].
func (m Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r := m(ctx, req)
		if r.Panic != nil {
			panic(r.Panic)
		}
		if r.Block != nil {
			select {
			case <-r.Block:
			case <-ctx.Done():
				yield(llm.Event{}, ctx.Err())
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		if r.Reasoning != "" && !yield(llm.Event{Kind: llm.EventReasoning, Text: r.Reasoning}, nil) {
			return
		}
		if r.Text != "" && !yield(llm.Event{Kind: llm.EventText, Text: r.Text}, nil) {
			return
		}
		if r.Err != nil {
			yield(llm.Event{}, r.Err)
			return
		}
		for i := range r.ToolCalls {
			if !yield(llm.Event{Kind: llm.EventToolCall, ToolCall: &r.ToolCalls[i]}, nil) {
				return
			}
		}
		if r.Usage != nil && !yield(llm.Event{Kind: llm.EventUsage, Usage: r.Usage}, nil) {
			return
		}
		fin := r.Finish
		if fin == "" {
			fin = llm.FinishStop
			if len(r.ToolCalls) > 0 {
				fin = llm.FinishToolCalls
			}
		}
		yield(llm.Event{Kind: llm.EventFinish, Finish: fin}, nil)
	}
}

// Echo is a model that answers every request with "echo: " and the last
// user message.
var Echo = Model(func(_ context.Context, req *llm.Request) Reply {
	return Reply{Text: "echo: " + LastUser(req), Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}
})

// LastUser returns the content of the request's last user message.
func LastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// System returns the request's system prompt, or "".
func System(req *llm.Request) string {
	if req.System != "" {
		return req.System
	}
	if len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem {
		return req.Messages[0].Content
	}
	return ""
}

// ToolResults returns the contents of the tool messages after the last
// assistant message that asked for tools, in order.
func ToolResults(req *llm.Request) []string {
	var out []string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != llm.RoleTool {
			break
		}
		out = append([]string{m.Content}, out...)
	}
	return out
}

// IsChild reports whether the request comes from a subagent child: its
// system prompt is the subagent template's or says so.
func IsChild(req *llm.Request) bool {
	return strings.Contains(System(req), "subagent")
}
