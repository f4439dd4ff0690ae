package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// world builds a parent agent whose service has spawn and fork and whose
// registry has the given bindings (the defaults when none).
func world(t *testing.T, o st.ParentOptions, bindings ...subagent.Binding) *st.Parent {
	t.Helper()
	p := st.NewParent(t, o)
	p.Service.RegisterProvider(spawn.New(nil))
	p.Service.RegisterProvider(fork.New(nil))
	if len(bindings) == 0 {
		bindings = subagent.DefaultBindings()
	}
	for _, b := range bindings {
		dispose, err := subagent.Bind(p.Service, p.Tools, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	return p
}

// call runs the named tool directly, as the parent's turn would.
func call(t *testing.T, ctx context.Context, p *st.Parent, name, description, prompt string, report tools.Reporter) *tools.Result {
	t.Helper()
	tl, ok := p.Tool(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	in, _ := json.Marshal(map[string]string{"description": description, "prompt": prompt})
	if report == nil {
		report = tools.Discard
	}
	res, err := tl.Execute(ctx, &tools.Call{ID: "tc_1", Input: in, Env: p.Env, Report: report})
	if err != nil {
		t.Fatalf("Execute returned a Go error: %v", err)
	}
	return res
}

// recordingProvider records requests and hands out runs whose ending the
// test chooses.
type recordingProvider struct {
	name       string
	res        subagents.Result
	disposeErr error
	block      bool // the run ends only when cancelled or disposed

	mu       sync.Mutex
	reqs     []subagents.StartRequest
	disposed atomic.Int32
	cancels  atomic.Int32
}

func (p *recordingProvider) Name() string { return p.name }
func (p *recordingProvider) Capabilities() subagents.Capabilities {
	return subagents.Capabilities{}
}
func (p *recordingProvider) InheritsParentContext() bool { return false }
func (p *recordingProvider) Start(_ context.Context, req subagents.StartRequest) (subagents.Run, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	r := &recRun{p: p, done: make(chan struct{}), res: p.res}
	if !p.block {
		r.once.Do(func() { close(r.done) })
	}
	return r, nil
}

type recRun struct {
	p    *recordingProvider
	done chan struct{}
	once sync.Once
	res  subagents.Result
}

func (r *recRun) ID() string { return "rec" }
func (r *recRun) Wait(ctx context.Context) (subagents.Result, error) {
	select {
	case <-r.done:
		return r.res, nil
	case <-ctx.Done():
		return subagents.Result{}, ctx.Err()
	}
}
func (r *recRun) Cancel() {
	r.p.cancels.Add(1)
	r.once.Do(func() { r.res = subagents.Result{StopReason: subagents.StopAborted, Output: "half"}; close(r.done) })
}
func (r *recRun) Dispose() error {
	r.p.disposed.Add(1)
	r.once.Do(func() { close(r.done) })
	return r.p.disposeErr
}

func TestExecute_ACompletedRunReturnsTheChildsAnswer(t *testing.T) {
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		return st.Reply{Text: "the answer is 42", Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}}
	})})
	res := call(t, t.Context(), p, "subagent", "Find the answer", "what is the answer?", nil)
	if res.IsError || res.Output != "the answer is 42" {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Content) != 1 || res.Content[0].Text != "the answer is 42" {
		t.Fatalf("content = %+v", res.Content)
	}
	raw := res.RawOutput.(subagent.RawOutput)
	if raw.StopReason != subagents.StopCompleted || raw.Usage.TotalTokens != 7 {
		t.Fatalf("rawOutput = %+v", raw)
	}
	tl, _ := p.Tool("subagent")
	if title := tl.(tools.Titler).Title(json.RawMessage(`{"description":"Find the answer","prompt":"x"}`)); title != "Subagent: Find the answer" {
		t.Fatalf("title = %q", title)
	}
}

func TestExecute_AnExposedChildIsLinkedAfterTheAnswerText(t *testing.T) {
	ex := &st.Exposure{}
	p := world(t, st.ParentOptions{Expose: ex, Model: st.Echo})
	res := call(t, t.Context(), p, "subagent", "Echo", "hello", nil)
	if len(res.Content) != 2 || res.Content[0].Type != tools.ContentText || res.Content[1].Type != tools.ContentSession || res.Content[1].SessionID != "s_main/sa1" {
		t.Fatalf("content = %+v", res.Content)
	}
	if a, _ := ex.Announcement("s_main/sa1"); a.Title != "subagent" || a.Description != "Echo" {
		t.Fatalf("announcement = %+v", a)
	}
}

func TestExecute_StructuredOutputIsTheResultWhenPresent(t *testing.T) {
	prov := &recordingProvider{name: "rec", res: subagents.Result{StopReason: subagents.StopCompleted, Output: "```json\n{\"a\":1}\n```", Structured: json.RawMessage(`{"a":1}`)}}
	p := st.NewParent(t, st.ParentOptions{})
	p.Service.RegisterProvider(prov)
	d, _ := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec"}, nil)
	defer d()
	res := call(t, t.Context(), p, "subagent", "d", "p", nil)
	if res.IsError || res.Output != `{"a":1}` {
		t.Fatalf("result = %+v", res)
	}
}

func TestExecute_ANonCompletedStopReasonIsAnErrorResultWithAHeadline(t *testing.T) {
	cases := []struct {
		name     string
		res      subagents.Result
		headline string
		want     []string
	}{
		{"error", subagents.Result{StopReason: subagents.StopError, Diagnostic: "the model backend failed: HTTP 401", Output: "I started to"},
			"The subagent run failed.", []string{"The model backend failed: HTTP 401.", "Its output before the run ended:\n\nI started to"}},
		{"max-tokens", subagents.Result{StopReason: subagents.StopMaxTokens, Output: "a long answer cut"},
			"The subagent hit its token limit.", []string{"a long answer cut"}},
		{"refusal", subagents.Result{StopReason: subagents.StopRefusal},
			"The subagent declined the task.", []string{"It produced no output"}},
		{"aborted", subagents.Result{StopReason: subagents.StopAborted, Output: "half"},
			"The subagent was cancelled.", []string{"half"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prov := &recordingProvider{name: "rec", res: tc.res}
			p := st.NewParent(t, st.ParentOptions{})
			p.Service.RegisterProvider(prov)
			d, _ := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec"}, nil)
			defer d()
			res := call(t, t.Context(), p, "subagent", "d", "p", nil)
			if !res.IsError || !strings.HasPrefix(res.Output, tc.headline) {
				t.Fatalf("result = %+v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Fatalf("%q lacks %q", res.Output, w)
				}
			}
			if raw := res.RawOutput.(subagent.RawOutput); raw.StopReason != tc.res.StopReason {
				t.Fatalf("rawOutput = %+v", raw)
			}
			if prov.disposed.Load() != 1 {
				t.Fatalf("disposed %d times", prov.disposed.Load())
			}
		})
	}
}

func TestExecute_TheRunIsDisposedOnEveryPath(t *testing.T) {
	cases := []struct {
		name   string
		res    subagents.Result
		block  bool
		cancel bool
	}{
		{"success", subagents.Result{StopReason: subagents.StopCompleted, Output: "ok"}, false, false},
		{"error", subagents.Result{StopReason: subagents.StopError}, false, false},
		{"abort", subagents.Result{}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prov := &recordingProvider{name: "rec", res: tc.res, block: tc.block}
			p := st.NewParent(t, st.ParentOptions{})
			p.Service.RegisterProvider(prov)
			d, _ := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec"}, nil)
			defer d()
			ctx, cancel := context.WithCancel(t.Context())
			if tc.cancel {
				cancel()
			}
			res := call(t, ctx, p, "subagent", "d", "p", nil)
			cancel()
			if prov.disposed.Load() != 1 {
				t.Fatalf("disposed %d times (%+v)", prov.disposed.Load(), res)
			}
			if tc.cancel && (prov.cancels.Load() == 0 || !strings.HasPrefix(res.Output, "The subagent was cancelled")) {
				t.Fatalf("the turn's cancellation did not reach the run: %+v", res)
			}
		})
	}
}

func TestExecute_AFailedDisposeIsReportedWithTheOtherFailure(t *testing.T) {
	prov := &recordingProvider{name: "rec", res: subagents.Result{StopReason: subagents.StopError, Diagnostic: "the child crashed"}, disposeErr: errors.New("child process would not exit")}
	p := st.NewParent(t, st.ParentOptions{})
	p.Service.RegisterProvider(prov)
	d, _ := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec"}, nil)
	defer d()
	res := call(t, t.Context(), p, "subagent", "d", "p", nil)
	if !res.IsError || !contains(res.Output, "The subagent run failed. The child crashed.", "could not be shut down cleanly: child process would not exit") {
		t.Fatalf("result = %q", res.Output)
	}
	prov.res = subagents.Result{StopReason: subagents.StopCompleted, Output: "fine"}
	res = call(t, t.Context(), p, "subagent", "d", "p", nil)
	if !res.IsError || !contains(res.Output, "fine", "could not be shut down cleanly") {
		t.Fatalf("a completed run with a failed dispose = %+v", res)
	}
}

func TestExecute_TheBindingsAgentOptionsApplyToEveryChild(t *testing.T) {
	prov := &recordingProvider{name: "rec", res: subagents.Result{StopReason: subagents.StopCompleted}}
	p := st.NewParent(t, st.ParentOptions{})
	p.Service.RegisterProvider(prov)
	d, _ := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec", ToolName: "helper", DenyPermissions: true, Options: map[string]string{"k": "v"},
		AgentOptions: subagent.AgentOptions{Model: "small", SystemPrompt: "Be brief."}}, nil)

	defer d()
	call(t, t.Context(), p, "helper", "One\nTwo", "task one", nil)
	call(t, t.Context(), p, "helper", "Other", "task two", nil)
	for i, req := range prov.reqs {
		if req.Model != "small" || req.SystemPrompt != "Be brief." || !req.DenyPermissions || req.Name != "helper" ||
			req.Parent != p.Scope || req.ToolCallID != "tc_1" || req.Progress == nil || req.Options["k"] != "v" {
			t.Fatalf("request %d = %+v", i, req)
		}
	}
	if prov.reqs[0].Description != "One" || prov.reqs[0].Prompt != "task one" {
		t.Fatalf("description/prompt = %q/%q", prov.reqs[0].Description, prov.reqs[0].Prompt)
	}
}

func TestExecute_WithoutADelegationScopeTheCallIsAnErrorResult(t *testing.T) {
	p := world(t, st.ParentOptions{})
	// The tool as registered, outside any session's binding.
	tl, _ := p.Tools.Get("subagent")
	res, err := tl.Execute(t.Context(), &tools.Call{ID: "1", Input: json.RawMessage(`{"description":"d","prompt":"p"}`), Env: p.Env, Report: tools.Discard})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "no subagent scope") {
		t.Fatalf("result = %+v, %v", res, err)
	}
	for _, in := range []string{`{"description":"d"}`, `[1]`, `{"prompt":3}`} {
		res, err := tl.Execute(t.Context(), &tools.Call{ID: "1", Input: json.RawMessage(in), Env: p.Env, Report: tools.Discard})
		if err != nil || !res.IsError {
			t.Fatalf("input %s: result = %+v, %v", in, res, err)
		}
	}
}

func TestExecute_FallbackProgressIsShownInTheToolCall(t *testing.T) {
	p := world(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{Text: "looking", ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}, Usage: &llm.Usage{InputTokens: 9, OutputTokens: 1}}
		}
		return st.Reply{Text: "found it"}
	})})
	st.Register(t, p.Tools, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { return &tools.Result{Output: "ok"}, nil }})
	var mu sync.Mutex
	var updates []tools.Progress
	res := call(t, t.Context(), p, "subagent", "d", "p", tools.ReporterFunc(func(u tools.Progress) {
		mu.Lock()
		updates = append(updates, u)
		mu.Unlock()
	}))
	if res.Output != "found it" {
		t.Fatalf("result = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	last := updates[len(updates)-1]
	if len(last.Content) != 1 || last.Content[0].Text != "looking\n\nfound it\n\nTool calls:\n- noop (done)\n\nTokens: 9 in, 1 out" {
		t.Fatalf("last progress = %+v", last.Content)
	}
}

func TestExecute_AtTheDepthLimitTheToolStaysVisibleAndEachAttemptNamesTheLimit(t *testing.T) {
	p := world(t, st.ParentOptions{Depth: 2, MaxDepth: 2})
	if _, ok := p.Tools.Get("subagent"); !ok {
		t.Fatal("the tool vanished at the limit")
	}
	for range 2 {
		res := call(t, t.Context(), p, "subagent", "d", "p", nil)
		if !res.IsError || !contains(res.Output, "depth 3", "depth limit of 2", "Do this task yourself") {
			t.Fatalf("result = %q", res.Output)
		}
	}
}

// parentTurn runs one turn of the parent and returns its tool results.
func parentTurn(t *testing.T, ctx context.Context, p *st.Parent) (agent.Result, error) {
	t.Helper()
	return p.Agent.Prompt(ctx, agent.Input{Text: "go"}, func(agent.Event) {})
}

func subagentCalls(n int, prompt func(i int) string) []llm.ToolCall {
	calls := make([]llm.ToolCall, n)
	for i := range calls {
		args, _ := json.Marshal(map[string]string{"description": fmt.Sprintf("Task %d", i), "prompt": prompt(i)})
		calls[i] = llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "subagent", Arguments: string(args)}
	}
	return calls
}
