// This file maps a child's turn onto the seam's Result: stop reasons,
// output, structured answers, and diagnostics that are safe to show.

package inproc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// maxDiagnostic caps a diagnostic: it is for people, not a log dump.
const maxDiagnostic = runkit.MaxDiagnostic

// cut shortens s to at most n bytes at a character boundary.
func cut(s string, n int) string { return runkit.Cut(s, n) }

// outcome maps a turn that returned a result.
func (r *run) outcome(ar agent.Result) subagents.Result {
	res := subagents.Result{Usage: ar.Usage, ChildSessionID: r.c.session}
	if ar.LastMessage != nil {
		res.Output = ar.LastMessage.Content
		res.LastMessage = ar.LastMessage
	} else {
		res.Output = ar.Streamed
	}
	switch ar.StopReason {
	case agent.StopEndTurn:
		res.StopReason = subagents.StopCompleted
	case agent.StopCancelled:
		res.StopReason = subagents.StopAborted
	case agent.StopMaxTokens:
		res.StopReason = subagents.StopMaxTokens
	case agent.StopRefusal:
		res.StopReason = subagents.StopRefusal
	case agent.StopMaxTurnRequests:
		res.StopReason = subagents.StopError
		res.Diagnostic = "the child reached its limit of model requests for one task before it finished"
	default:
		res.StopReason = subagents.StopError
		res.Diagnostic = fmt.Sprintf("the child ended with an unknown stop reason %q", cut(string(ar.StopReason), 64))
	}
	if ar.Exhausted != nil {
		// The child's budget, or one above it, ran out before its next
		// model call: whichever bound it was, the run stopped at its
		// limit.
		res.StopReason, res.OutOfBudget = subagents.StopMaxTokens, true
		res.Diagnostic = ar.Exhausted.Error()
	}
	if r.cancelled.Load() && res.StopReason != subagents.StopCompleted {
		res.StopReason, res.Diagnostic, res.OutOfBudget = subagents.StopAborted, "", false
	}
	if res.StopReason == subagents.StopCompleted && r.c.schema != nil {
		structured, err := runkit.Structured(r.c.schema, res.Output)
		if err != nil {
			r.schemaErr = err
			res.StopReason = subagents.StopError
			res.Diagnostic = cut("the child's final answer does not match the output schema: "+err.Error(), maxDiagnostic)
		} else {
			res.Structured = structured
		}
	}
	return res
}

// failure maps a turn that failed. Its output is what the child said
// before it failed.
func (r *run) failure(err error) subagents.Result {
	res := subagents.Result{
		StopReason:     subagents.StopError,
		Diagnostic:     diagnose(err),
		Output:         r.partial(),
		Usage:          r.c.meter.Usage().Since(r.before),
		ChildSessionID: r.c.session,
	}
	if res.Output != "" {
		res.LastMessage = &llm.Message{Role: llm.RoleAssistant, Content: res.Output}
	}
	if r.cancelled.Load() {
		res.StopReason, res.Diagnostic = subagents.StopAborted, ""
	}
	return res
}

// diagnose explains a failed turn to people without repeating anything
// that could be private: tool inputs, file contents, environment values or
// credentials never appear, only the kind of failure and, for a model
// server, its status and a scrubbed message.
func diagnose(err error) string {
	var api *llm.APIError
	switch {
	case errors.Is(err, errCrashed):
		return "the child crashed"
	case errors.As(err, &api):
		d := "the model backend failed"
		if api.Status != 0 {
			d += fmt.Sprintf(": HTTP %d", api.Status)
		}
		if msg := runkit.ScrubMessage(api.Message); msg != "" {
			d += ": " + cut(msg, 512)
		}
		return d
	case errors.Is(err, llm.ErrTruncated):
		return "the model backend failed: the response stream ended early"
	}
	text := err.Error()
	if name, ok := panickedTool(text); ok {
		return fmt.Sprintf("the tool %s crashed", name)
	}
	if rest, ok := strings.CutPrefix(text, "agent: tool "); ok {
		if name, _, ok := strings.Cut(rest, ":"); ok && isIdent(name) {
			return fmt.Sprintf("the tool %s failed", name)
		}
	}
	if strings.HasPrefix(text, "agent: model call failed") {
		return "the model backend failed"
	}
	if strings.HasPrefix(text, "agent: system prompt") {
		return "the child's system prompt could not be built"
	}
	return "the child failed: " + cut(runkit.ScrubMessage(runkit.FirstLine(text)), 512)
}

// panickedTool recognises the agent's report of a tool panic, "tool NAME
// panicked: …", keeping only the name (the panic value may hold data).
func panickedTool(text string) (string, bool) {
	i := strings.Index(text, "tool ")
	if i < 0 {
		return "", false
	}
	name, _, ok := strings.Cut(text[i+len("tool "):], " panicked")
	if !ok || !isIdent(name) {
		return "", false
	}
	return name, true
}

func isIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
