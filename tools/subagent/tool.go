// This file implements the tool itself: one call starts a run on the bound
// provider, waits for it, disposes it and reports its outcome.

package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
)

// Headlines of the error result for each ending other than completed.
const (
	headlineError     = "The subagent run failed"
	headlineMaxTokens = "The subagent hit its token limit"
	headlineBudget    = "The subagent stopped: its budget ran out"
	headlineRefusal   = "The subagent declined the task"
	headlineAborted   = "The subagent was cancelled"
)

// tool is a binding's registered tool.
type tool struct {
	svc    *subagents.Service
	b      Binding
	schema func() *jsonschema.Resolved // b.OutputSchema compiled, see compiledOnce
	// inherit selects the wording: the provider's children see the
	// parent's conversation.
	inherit bool
	// description is the binding's head and the derived wording.
	description string
}

var (
	_ subagents.Delegator = (*tool)(nil)
	_ tools.Titler        = (*tool)(nil)
	_ tools.Parallel      = (*tool)(nil)
)

// bound is the tool as one agent runs it: bound to that agent's scope by
// its session (subagents.Scope.Attach).
type bound struct {
	*tool
	scope *subagents.Scope
}

// BindScope returns the tool bound to the delegating agent's scope.
func (t *tool) BindScope(sc *subagents.Scope) tools.Tool { return &bound{tool: t, scope: sc} }

// Execute runs one delegation from the bound scope.
func (b *bound) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	return b.run(ctx, call, b.scope)
}

func (t *tool) Name() string                 { return t.b.ToolName }
func (t *tool) Description() string          { return t.description }
func (t *tool) InputSchema() json.RawMessage { return wordings()[boolIndex(t.inherit)].schema }
func (t *tool) Kind() tools.Kind             { return tools.KindOther }

// ParallelSafe reports true: several subagents of one response run at once.
func (t *tool) ParallelSafe() bool { return true }

// input is what the model sends; its schema is built in wording.go.
type input struct {
	Description string `json:"description" jsonschema:"A short summary of the task in 3-7 words, shown to the user (for example \"Find the config loader\")."`
	Prompt      string `json:"prompt"`
}

// Title is "Subagent: <description>".
func (t *tool) Title(raw json.RawMessage) string {
	var in input
	_ = json.Unmarshal(raw, &in)
	if d := utf8cut.Line(in.Description, 80); d != "" {
		return "Subagent: " + d
	}
	return "Subagent"
}

// RawOutput is the tool call's rawOutput for the editor.
type RawOutput struct {
	// Subagent is the binding's tool name: it marks the call as a
	// delegation for clients that break a turn's usage down per child
	// (dshd prompt --json).
	Subagent   string               `json:"subagent"`
	StopReason subagents.StopReason `json:"stopReason"`
	// Usage is what the child and its descendants spent.
	Usage llm.Usage `json:"usage"`
}

// Execute is the tool outside any session: it has no scope to delegate
// from, so a call is an error result (after the arguments are checked).
func (t *tool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	return t.run(ctx, call, nil)
}

// run runs one delegation from scope: start, wait, always dispose.
func (t *tool) run(ctx context.Context, call *tools.Call, scope *subagents.Scope) (out *tools.Result, err error) {
	var in input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tools.Errorf("the arguments must be an object with the string fields description and prompt: %v", err), nil
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tools.Errorf("prompt is required: give the subagent its task"), nil
	}
	if scope == nil {
		return tools.Errorf("this agent cannot delegate: it has no subagent scope"), nil
	}
	report := call.Report
	if report == nil {
		report = tools.Discard
	}
	req := t.request(in, scope, call.ID)
	if t.b.Background {
		return t.background(ctx, req, in)
	}
	req.Meter = call.Meter
	req.Progress = func(p subagents.Progress) {
		report.Update(tools.Progress{Content: []tools.Content{tools.TextContent(renderProgress(p))}})
	}
	run, err := t.svc.Start(ctx, t.b.Provider, req)
	if err != nil {
		return startFailure(err), nil
	}
	// The run is disposed on every path; a failing dispose is reported
	// with whatever else the result says.
	defer func() {
		if derr := run.Dispose(); derr != nil {
			out = withDisposeFailure(out, derr)
		}
	}()
	res, werr := waitCancellable(ctx, run)
	if werr != nil {
		return tools.Errorf("%s: the run could not be followed to its end: %v", headlineError, werr), nil
	}
	return resultFor(t.b.ToolName, res), nil
}

// request is the start request of a call from scope. The binding's
// output schema is compiled by then, once for the binding, which holds
// it: the provider's start finds it compiled. (A job restored from the
// journal starts through the session's tool, which has one.)
func (t *tool) request(in input, scope *subagents.Scope, toolCallID string) subagents.StartRequest {
	if t.schema != nil {
		t.schema()
	}
	return subagents.StartRequest{
		Prompt:          in.Prompt,
		Description:     firstLine(in.Description),
		Name:            t.b.ToolName,
		Model:           t.b.AgentOptions.Model,
		SystemPrompt:    t.b.AgentOptions.SystemPrompt,
		DenyPermissions: t.b.DenyPermissions,
		Parent:          scope,
		ToolCallID:      toolCallID,
		Options:         t.b.Options,
		ToolFilter:      t.b.Tools,
		OutputSchema:    t.b.OutputSchema,
		DepthLimit:      t.b.MaxDepth,
		Budget:          t.b.Budget,
	}
}

// waitCancellable waits for run with ctx's cancellation as the run's:
// the run then ends aborted and Wait returns, so the child is flushed
// before the caller answers. A ctx that has ended already cancels the run
// here, before Wait: a run cancelled before anyone waited for it settles
// without running (AfterFunc would cancel it from another goroutine, too
// late).
func waitCancellable(ctx context.Context, run subagents.Run) (subagents.Result, error) {
	if ctx.Err() != nil {
		run.Cancel()
	} else {
		stop := context.AfterFunc(ctx, run.Cancel)
		defer stop()
	}
	return run.Wait(context.WithoutCancel(ctx))
}

// startFailure is the model's view of a Start that failed.
func startFailure(err error) *tools.Result {
	msg := strings.TrimPrefix(err.Error(), "subagents: ")
	if errors.Is(err, subagents.ErrDepthLimit) {
		return tools.Errorf("Cannot start a subagent: %s. Do this task yourself instead of delegating it.", msg)
	}
	return tools.Errorf("The subagent could not be started: %s", msg)
}

// resultFor maps a run's result onto the tool result.
func resultFor(name string, res subagents.Result) *tools.Result {
	raw := RawOutput{Subagent: name, StopReason: res.StopReason, Usage: res.Usage}
	if res.StopReason == subagents.StopCompleted {
		answer := res.Output
		if len(res.Structured) > 0 {
			answer = string(res.Structured)
		}
		if answer == "" {
			answer = "The subagent finished without a final message."
		}
		return &tools.Result{Output: answer, Content: content(answer, res.ChildSessionID), RawOutput: raw}
	}
	var b strings.Builder
	b.WriteString(headline(res))
	b.WriteString(".")
	if res.Diagnostic != "" {
		b.WriteString(" ")
		b.WriteString(upperFirst(res.Diagnostic))
		if !strings.HasSuffix(res.Diagnostic, ".") {
			b.WriteString(".")
		}
	}
	if out := strings.TrimSpace(res.Output); out != "" {
		b.WriteString("\n\nIts output before the run ended:\n\n")
		b.WriteString(out)
	} else {
		b.WriteString("\n\nIt produced no output before the run ended.")
	}
	text := b.String()
	return &tools.Result{Output: text, IsError: true, Content: content(text, res.ChildSessionID), RawOutput: raw}
}

func headline(res subagents.Result) string {
	if res.OutOfBudget {
		return headlineBudget
	}
	switch res.StopReason {
	case subagents.StopMaxTokens:
		return headlineMaxTokens
	case subagents.StopRefusal:
		return headlineRefusal
	case subagents.StopAborted:
		return headlineAborted
	}
	return headlineError
}

// content is the editor's view: the text, then a link to the child's
// session when the editor sees the child.
func content(text, childSession string) []tools.Content {
	c := []tools.Content{tools.TextContent(text)}
	if childSession != "" {
		c = append(c, tools.Content{Type: tools.ContentSession, SessionID: childSession})
	}
	return c
}

// withDisposeFailure adds a failed dispose to a result, keeping whatever
// it already reports.
func withDisposeFailure(r *tools.Result, err error) *tools.Result {
	note := fmt.Sprintf("The subagent could not be shut down cleanly: %v", err)
	if r == nil {
		return tools.Errorf("%s", note)
	}
	out := *r
	out.IsError = true
	out.Output = strings.TrimRight(r.Output, "\n") + "\n\n" + note
	out.Content = append([]tools.Content{tools.TextContent(out.Output)}, nonText(r.Content)...)
	return &out
}

func nonText(cs []tools.Content) []tools.Content {
	var out []tools.Content
	for _, c := range cs {
		if c.Type != tools.ContentText {
			out = append(out, c)
		}
	}
	return out
}

// renderProgress turns the fallback progress summary into the text shown
// in the parent's tool call.
func renderProgress(p subagents.Progress) string {
	var b strings.Builder
	if t := strings.TrimSpace(p.Text); t != "" {
		b.WriteString(t)
	}
	if len(p.Tools) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Tool calls:")
		for _, line := range p.Tools {
			b.WriteString("\n- ")
			b.WriteString(line)
		}
	}
	if p.Usage.InputTokens > 0 || p.Usage.OutputTokens > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Tokens: %d in, %d out", p.Usage.InputTokens, p.Usage.OutputTokens)
	}
	if b.Len() == 0 {
		return "Working…"
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// firstLine is the description a child is given: the first line of the
// model's, at most 200 bytes, with no mark of the lines left out (the
// seam's description is a few words; the editor's title marks them).
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return utf8cut.Line(line, 200)
}
