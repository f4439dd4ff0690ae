// This file runs the tool calls of one model response: announce, gate,
// execute in parallel (in the model's order where they conflict, see
// order.go), report, and hand the results back in order.

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// pendingCall is one tool call of a response on its way through its
// lifecycle.
type pendingCall struct {
	call  llm.ToolCall
	id    string // the id the editor sees
	tool  tools.Tool
	input json.RawMessage
	// early is set when the call fails before it can run (unknown tool,
	// arguments that are not JSON); it is the message the model gets.
	early string
}

// runTools runs calls and returns one tool message per call, in order. The
// error is non-nil only when the turn must end (a tool panicked or failed
// in a way the model cannot act on).
func (t *turn) runTools(calls []llm.ToolCall) ([]llm.Message, error) {
	a := t.a
	pcs := make([]*pendingCall, len(calls))
	for i, c := range calls {
		pc := &pendingCall{call: c, id: a.newID("tc")}
		pcs[i] = pc
		t.prepare(pc)
	}

	msgs := make([]llm.Message, len(pcs))
	errs := make([]error, len(pcs))
	sem := make(chan struct{}, a.opts.MaxParallelTools)
	var serial sync.Mutex
	var wg sync.WaitGroup
	// Calls run side by side but in the model's order where one may
	// change what another sees (order.go).
	after := t.order(pcs)
	done := make([]chan struct{}, len(pcs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	for i, pc := range pcs {
		if pc.early != "" {
			msgs[i] = toolMessage(pc, pc.early)
			close(done[i])
			continue
		}
		wg.Go(func() {
			defer close(done[i])
			if !t.waitTurn(after[i], done) {
				msgs[i] = t.cancelled(pc)
				return
			}
			// When a slot frees up after the turn was cancelled, select may
			// still pick the slot; execute then ends the call as cancelled
			// before the tool runs, so a cancelled turn starts no tool.
			select {
			case sem <- struct{}{}:
			case <-t.ctx.Done():
				msgs[i] = t.cancelled(pc)
				return
			}
			defer func() { <-sem }()
			if p, ok := pc.tool.(tools.Parallel); ok && !p.ParallelSafe() {
				serial.Lock()
				defer serial.Unlock()
			}
			msgs[i], errs[i] = t.execute(pc)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return msgs, err
		}
	}
	return msgs, nil
}

// prepare resolves the tool, checks the arguments and announces the call.
func (t *turn) prepare(pc *pendingCall) {
	a := t.a
	args := strings.TrimSpace(pc.call.Arguments)
	if args == "" {
		args = "{}"
	}
	var tool tools.Tool
	ok := false
	if a.opts.Tools != nil && t.offers(pc.call.Name) {
		tool, ok = a.opts.Tools.Get(pc.call.Name)
	}
	valid := json.Valid([]byte(args))
	start := ToolCallStarted{ID: pc.id, Name: pc.call.Name, Title: pc.call.Name, Kind: tools.KindOther}
	if valid {
		start.RawInput = json.RawMessage(args)
	}
	if ok {
		start.Kind = tool.Kind()
		if tt, isTitler := tool.(tools.Titler); isTitler && valid {
			if title := tt.Title(json.RawMessage(args)); title != "" {
				start.Title = title
			}
		}
	}
	t.emit(start)

	switch {
	case !ok:
		pc.early = fmt.Sprintf("Error: there is no tool named %q. Available tools: %s.", pc.call.Name, t.toolNames())
	case !valid:
		pc.early = fmt.Sprintf("Error: the arguments of %s are not valid JSON: %q. Call the tool again with a JSON object that matches its schema.", pc.call.Name, truncate(pc.call.Arguments, 200))
	default:
		pc.tool = tool
		pc.input = json.RawMessage(args)
		return
	}
	t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolFailed, Content: []tools.Content{tools.TextContent(pc.early)}})
}

func (t *turn) toolNames() string {
	if t.a.opts.Tools == nil {
		return "none"
	}
	var names []string
	for _, tl := range t.a.opts.Tools.Tools() {
		names = append(names, tl.Name())
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// execute runs one prepared call and reports its end. A call whose turn
// was cancelled while it waited for its slot ends cancelled without
// running.
func (t *turn) execute(pc *pendingCall) (msg llm.Message, err error) {
	a := t.a
	if t.ctx.Err() != nil {
		return t.cancelled(pc), nil
	}
	var startedOnce sync.Once
	started := func() {
		startedOnce.Do(func() { t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolInProgress}) })
	}
	var env tools.Env
	if a.opts.Env != nil {
		env = *a.opts.Env
	}
	gate := &callGate{inner: env.Permission, started: started, id: pc.id, tool: pc.call.Name}
	env.Permission = gate
	env.Plan = func(entries []tools.PlanEntry) {
		t.emit(PlanUpdated{Entries: append([]tools.PlanEntry(nil), entries...)})
	}
	if !gated(pc.tool.Kind()) {
		started()
	}
	call := &tools.Call{
		ID:    pc.id,
		Input: pc.input,
		Env:   &env,
		Meter: t.meter,
		Report: tools.ReporterFunc(func(p tools.Progress) {
			started()
			t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Title: p.Title, Content: p.Content, Locations: p.Locations})
		}),
	}

	res, execErr := t.safeExecute(pc, call)
	if execErr != nil {
		if t.ctx.Err() != nil || gate.cancelled.Load() {
			return t.cancelled(pc), nil
		}
		if _, panicked := execErr.(*panicError); panicked {
			t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolFailed, Content: []tools.Content{tools.TextContent("The tool crashed.")}})
			return toolMessage(pc, "Error: the tool crashed."), execErr
		}
		text := fmt.Sprintf("Error: %s failed: %v", pc.call.Name, execErr)
		t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolFailed, Content: []tools.Content{tools.TextContent(text)}})
		return toolMessage(pc, text), fmt.Errorf("agent: tool %s: %w", pc.call.Name, execErr)
	}
	if res == nil {
		res = &tools.Result{}
	}
	if gate.cancelled.Load() && res.IsError {
		return t.cancelled(pc), nil
	}
	upd := ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolCompleted, Title: res.Title, Content: res.Content, Locations: res.Locations, RawOutput: res.RawOutput}
	out := res.Output
	if res.IsError {
		upd.Status = ToolFailed
		if !strings.HasPrefix(out, "Error") {
			out = "Error: " + out
		}
	}
	if upd.Content == nil && res.Output != "" {
		upd.Content = []tools.Content{tools.TextContent(res.Output)}
	}
	t.emit(upd)
	return toolMessage(pc, out), nil
}

// panicError is a recovered tool panic.
type panicError struct {
	tool  string
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("tool %s panicked: %v", e.tool, e.value) }

func (t *turn) safeExecute(pc *pendingCall, call *tools.Call) (res *tools.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			t.a.log.Error("tool panicked", "tool", pc.call.Name, "panic", v, "stack", string(debug.Stack()))
			res, err = nil, &panicError{tool: pc.call.Name, value: v}
		}
	}()
	return pc.tool.Execute(t.ctx, call)
}

// cancelled ends a call that the turn's cancellation stopped.
func (t *turn) cancelled(pc *pendingCall) llm.Message {
	t.emit(ToolCallUpdated{ID: pc.id, Name: pc.call.Name, Status: ToolFailed, Content: []tools.Content{tools.TextContent("Cancelled.")}})
	return toolMessage(pc, "The user cancelled this tool call before it finished.")
}

func toolMessage(pc *pendingCall, content string) llm.Message {
	return llm.Message{Role: llm.RoleTool, ToolCallID: pc.call.ID, Content: content}
}

// gated reports whether a tool of this kind asks permission before it
// acts; such calls stay pending until the gate allows them.
func gated(k tools.Kind) bool {
	switch k {
	case tools.KindEdit, tools.KindDelete, tools.KindMove, tools.KindExecute:
		return true
	}
	return false
}

// callGate wraps the session's permission gate for one call: it stamps the
// call's id, marks the call in progress once allowed, and remembers a
// cancelled decision so the call ends as cancelled. The decision itself
// is tools/permission's.
type callGate struct {
	inner     tools.Permission
	started   func()
	id, tool  string
	cancelled atomic.Bool
}

func (g *callGate) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	req.ToolCallID = g.id
	if req.ToolName == "" {
		req.ToolName = g.tool
	}
	d, err := permission.Decide(ctx, g.inner, req)
	switch d {
	case tools.Allowed:
		g.started()
	case tools.Cancelled:
		g.cancelled.Store(true)
	}
	return d, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
