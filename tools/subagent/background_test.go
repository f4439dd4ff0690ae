package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
	"github.com/dshd/dshd/tools/tasks"
)

// bgWorld is a parent with a background spawn binding "bg" and the task
// tools.
func bgWorld(tb testing.TB, o st.ParentOptions) *st.Parent {
	tb.Helper()
	for _, tl := range tasks.Tools() {
		if o.Tools == nil {
			o.Tools = tools.NewRegistry(nil)
		}
		if _, err := o.Tools.Register(tl); err != nil {
			tb.Fatal(err)
		}
	}
	p := st.NewParent(tb, o)
	p.Service.RegisterProvider(spawn.New(nil))
	dispose, err := subagent.Bind(p.Service, p.Tools, subagent.Binding{ToolName: "bg", Provider: "spawn", Background: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(dispose)
	return p
}

// exec runs the tool name with args as the parent's agent would.
func exec(tb testing.TB, ctx context.Context, p *st.Parent, name string, args any) *tools.Result {
	tb.Helper()
	tl, ok := p.Tool(name)
	if !ok {
		tb.Fatalf("no tool %q", name)
	}
	in, _ := json.Marshal(args)
	res, err := tl.Execute(ctx, &tools.Call{ID: "call", Input: in, Env: p.Env, Report: tools.Discard})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestBackground_TheCallReturnsTheTaskAtOnceAndTheModelSeesOnlyDescriptionAndPrompt(t *testing.T) {
	gate := make(chan struct{})
	p := bgWorld(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		return st.Reply{Block: gate, Text: "child says " + st.LastUser(req), Usage: &llm.Usage{InputTokens: 70, OutputTokens: 7, TotalTokens: 77}}
	})})
	tl, _ := p.Tool("bg")
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(tl.InputSchema(), &schema); err != nil || len(schema.Properties) != 2 || schema.Properties["description"] == nil || schema.Properties["prompt"] == nil {
		t.Fatalf("schema %s", tl.InputSchema())
	}
	res := exec(t, t.Context(), p, "bg", map[string]string{"description": "Look around", "prompt": "what is here"})
	if res.IsError || !strings.Contains(res.Output, "Started background task t1") || !strings.Contains(res.Output, "task_continue") {
		t.Fatalf("result = %+v", res)
	}
	if in, _ := p.Session.Tasks().Get("t1"); in.State != tasks.StateRunning || in.Kind != tasks.KindSubagent || in.Title != "bg: Look around" {
		t.Fatalf("task = %+v", in)
	}
	close(gate)
	w, err := p.Session.Tasks().Wait(t.Context(), "t1", time.Minute)
	if err != nil || w.Task.State != tasks.StateCompleted || w.Task.Result != "child says what is here" || w.Task.Output != "child says what is here" {
		t.Fatalf("settled = %+v, %v", w, err)
	}
	// The child's usage is the task's, and rolls up into the session's.
	if w.Task.Usage.InputTokens != 70 || p.Agent.Usage().InputTokens != 70 {
		t.Fatalf("task usage %+v, session usage %+v", w.Task.Usage, p.Agent.Usage())
	}
}

func TestBackground_CancellingTheTurnLeavesTheChildRunningCancellingTheTaskStopsIt(t *testing.T) {
	inModel := make(chan struct{}, 1)
	p := bgWorld(t, st.ParentOptions{Model: st.Model(func(ctx context.Context, req *llm.Request) st.Reply {
		inModel <- struct{}{}
		return st.Reply{Block: make(chan struct{})}
	})})
	turn, cancelTurn := context.WithCancel(t.Context())
	exec(t, turn, p, "bg", map[string]string{"description": "d", "prompt": "hang"})
	st.Recv(t, inModel)
	cancelTurn()
	set := p.Session.Tasks()
	if in, _ := set.Get("t1"); in.State != tasks.StateRunning || p.Registry.Len() != 2 {
		t.Fatalf("after the turn's cancel: %+v, %d live agents", in, p.Registry.Len())
	}
	res := exec(t, t.Context(), p, "task_cancel", map[string]string{"id": "t1"})
	if !strings.Contains(res.Output, "cancelled") {
		t.Fatalf("task_cancel = %+v", res)
	}
	if in, _ := set.Get("t1"); in.State != tasks.StateCancelled {
		t.Fatalf("after task_cancel: %+v", in)
	}
}

// bareProvider runs children that are neither steerable nor resumable.
type bareProvider struct{}

func (bareProvider) Name() string                         { return "plain" }
func (bareProvider) Capabilities() subagents.Capabilities { return subagents.Capabilities{} }
func (bareProvider) InheritsParentContext() bool          { return false }
func (bareProvider) Start(context.Context, subagents.StartRequest) (subagents.Run, error) {
	return &bareRun{done: make(chan struct{})}, nil
}

type bareRun struct {
	done  chan struct{}
	ended atomic.Bool
}

func (r *bareRun) ID() string { return "plain-1" }
func (r *bareRun) Wait(ctx context.Context) (subagents.Result, error) {
	select {
	case <-r.done:
		return subagents.Result{StopReason: subagents.StopCompleted, Output: "plain answer"}, nil
	case <-ctx.Done():
		return subagents.Result{}, ctx.Err()
	}
}
func (r *bareRun) Cancel() {
	if r.ended.CompareAndSwap(false, true) {
		close(r.done)
	}
}
func (r *bareRun) Dispose() error { r.Cancel(); return nil }

func TestBackground_ACapabilityTheProviderLacksIsAnErrorNamingIt(t *testing.T) {
	p := bgWorld(t, st.ParentOptions{})
	p.Service.RegisterProvider(bareProvider{})
	dispose, err := subagent.Bind(p.Service, p.Tools, subagent.Binding{ToolName: "plain", Provider: "plain", Background: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dispose()
	exec(t, t.Context(), p, "plain", map[string]string{"description": "d", "prompt": "x"})
	res := exec(t, t.Context(), p, "task_send", map[string]string{"id": "t1", "message": "hi"})
	if !res.IsError || !strings.Contains(res.Output, "the plain provider's children cannot take messages while they run (it lacks the Steerable capability)") {
		t.Fatalf("task_send = %+v", res)
	}
	p.Session.Tasks().Cancel(t.Context(), "t1")
	res = exec(t, t.Context(), p, "task_continue", map[string]string{"id": "t1", "prompt": "more"})
	if !res.IsError || !strings.Contains(res.Output, "the plain provider's children cannot be continued (it lacks the Resumable capability)") {
		t.Fatalf("task_continue = %+v", res)
	}
}

// BenchmarkBackground_StartReturnsToTheModel is the time from the model's
// call of a background spawn binding to its result: the child built,
// announced and its task started, but not waited for (goal: under 1 ms).
func BenchmarkBackground_StartReturnsToTheModel(b *testing.B) {
	p := bgWorld(b, st.ParentOptions{Tasks: tasks.Options{MaxRunning: 1 << 20}, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		return st.Reply{Text: "done"}
	})})
	tl, _ := p.Tool("bg")
	in := json.RawMessage(`{"description":"d","prompt":"go"}`)
	b.ResetTimer()
	for b.Loop() {
		res, err := tl.Execute(b.Context(), &tools.Call{ID: "call", Input: in, Env: p.Env, Report: tools.Discard})
		if err != nil || res.IsError {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}

// BenchmarkBackground_AThousandConcurrentSpawnChildren starts 1,000
// background spawn children in one session on the scripted model (the one
// `--model scripted:FILE` runs), holds every one at the door of its model
// call until all 1,000 are there at once, then lets the script answer and
// waits until every task settled with its own child's answer.
func BenchmarkBackground_AThousandConcurrentSpawnChildren(b *testing.B) {
	const n = 1000
	script, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{User: "^child [0-9]+$", Text: "done {{user}}"}}}, &scripted.Options{Instant: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		model := &heldModel{next: script, n: n, all: make(chan struct{}), gate: make(chan struct{})}
		p := bgWorld(b, st.ParentOptions{Tasks: tasks.Options{MaxRunning: n}, Model: model})
		tl, _ := p.Tool("bg")
		b.StartTimer()
		for i := range n {
			in := json.RawMessage(fmt.Sprintf(`{"description":"d","prompt":"child %d"}`, i))
			if res, err := tl.Execute(b.Context(), &tools.Call{ID: "call", Input: in, Env: p.Env, Report: tools.Discard}); err != nil || res.IsError {
				b.Fatalf("%+v, %v", res, err)
			}
		}
		<-model.all
		close(model.gate)
		set := p.Session.Tasks()
		answers := make(map[string]bool, n)
		for range n {
			w, err := set.Wait(b.Context(), "", time.Minute)
			if err != nil || !w.Settled || w.Task.State != tasks.StateCompleted || !strings.HasPrefix(w.Task.Result, "done child ") {
				b.Fatalf("%+v, %v", w, err)
			}
			answers[w.Task.Result] = true
		}
		b.StopTimer()
		if len(answers) != n {
			b.Fatalf("%d distinct answers from %d children", len(answers), n)
		}
		p.Session.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n), "children/op")
}

// heldModel holds each call until n calls are in at once (all is closed
// when the n-th arrives) and gate opens, then lets next answer it; it
// proves the children were all in flight together.
type heldModel struct {
	next      llm.Model
	n         int32
	in        atomic.Int32
	all, gate chan struct{}
}

func (m *heldModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if m.in.Add(1) == m.n {
			close(m.all)
		}
		select {
		case <-m.gate:
		case <-ctx.Done():
			yield(llm.Event{}, ctx.Err())
			return
		}
		for ev, err := range m.next.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
