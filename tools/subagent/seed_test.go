package subagent_test

// Tests named after the dsh-tool-subagent test cases they mirror (issue
// 15). The races are run in loops; run them under -race.

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// loops is how often a race is tried.
const loops = 300

// orderProvider's runs end only when cancelled, and remember whether the
// cancel came before the owner waited. They are Settling, as a provider
// whose child begins at its owner's Wait must be, so the service's own
// watching never calls Wait.
type orderProvider struct {
	mu             sync.Mutex
	runs           int
	cancels        int
	cancelledFirst int // runs cancelled before their first Wait
}

func (p *orderProvider) Name() string                         { return "spy" }
func (p *orderProvider) Capabilities() subagents.Capabilities { return subagents.Capabilities{} }
func (p *orderProvider) InheritsParentContext() bool          { return false }
func (p *orderProvider) Start(context.Context, subagents.StartRequest) (subagents.Run, error) {
	p.mu.Lock()
	p.runs++
	p.mu.Unlock()
	return &orderRun{p: p, done: make(chan struct{})}, nil
}

type orderRun struct {
	p      *orderProvider
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	waited bool
}

func (r *orderRun) ID() string            { return "spy-child" }
func (r *orderRun) Done() <-chan struct{} { return r.done }
func (r *orderRun) Wait(ctx context.Context) (subagents.Result, error) {
	r.mu.Lock()
	r.waited = true
	r.mu.Unlock()
	select {
	case <-r.done:
		return subagents.Result{StopReason: subagents.StopAborted}, nil
	case <-ctx.Done():
		return subagents.Result{}, ctx.Err()
	}
}
func (r *orderRun) Cancel() {
	r.mu.Lock()
	first := !r.waited
	r.mu.Unlock()
	r.p.mu.Lock()
	r.p.cancels++
	if first {
		r.p.cancelledFirst++
	}
	r.p.mu.Unlock()
	r.once.Do(func() { close(r.done) })
}
func (r *orderRun) Dispose() error { r.once.Do(func() { close(r.done) }); return nil }

// Mirrors "cancels the run when the tool signal is ALREADY aborted before
// execute (no missed abort)", and spawn's "settles aborted (without running
// the child) when the request signal is ALREADY aborted" through the tool:
// a turn already cancelled cancels the run before waiting for it, the
// result is an aborted error result, and a real child never runs.
func TestExecute_CancelsTheRunWhenTheToolSignalIsAlreadyAbortedBeforeExecute(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()

	t.Run("a provider that leans only on Cancel", func(t *testing.T) {
		spy := &orderProvider{}
		p := st.NewParent(t, st.ParentOptions{})
		p.Service.RegisterProvider(spy)
		dispose, err := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "spy", ToolName: "subagent"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dispose()
		for i := range loops {
			res := call(t, cancelled, p, "subagent", "d", "p", nil)
			if !res.IsError || !strings.Contains(res.Output, "cancelled") {
				t.Fatalf("call %d: result = %+v", i, res)
			}
		}
		spy.mu.Lock()
		defer spy.mu.Unlock()
		if spy.runs != loops || spy.cancels != loops || spy.cancelledFirst != loops {
			t.Fatalf("%d runs, %d cancels, %d of them before the tool waited; want %d each", spy.runs, spy.cancels, spy.cancelledFirst, loops)
		}
	})

	t.Run("a real child never runs", func(t *testing.T) {
		var calls atomic.Int64
		p := world(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
			calls.Add(1)
			return st.Reply{Text: "the child's answer"}
		})})
		for i := range loops {
			res := call(t, cancelled, p, "subagent", "d", "p", nil)
			if !res.IsError || !strings.HasPrefix(res.Output, "The subagent was cancelled") {
				t.Fatalf("call %d: result = %+v", i, res)
			}
			if strings.Contains(res.Output, "the child's answer") {
				t.Fatalf("call %d: a cancelled turn got the child's answer: %q", i, res.Output)
			}
		}
		if n := calls.Load(); n != 0 {
			t.Fatalf("the child's model ran %d times for %d cancelled calls", n, loops)
		}
	})
}

// Mirrors "registers under a configurable toolName so multiple providers
// can coexist": two bindings, two tool names, and each call reaches its
// own provider.
func TestBind_RegistersUnderAConfigurableToolNameSoMultipleProvidersCanCoexist(t *testing.T) {
	p := st.NewParent(t, st.ParentOptions{})
	one := &recordingProvider{name: "one", res: subagents.Result{StopReason: subagents.StopCompleted, Output: "from one"}}
	two := &recordingProvider{name: "two", res: subagents.Result{StopReason: subagents.StopCompleted, Output: "from two"}}
	p.Service.RegisterProvider(one)
	p.Service.RegisterProvider(two)
	for _, b := range []subagent.Binding{{Provider: "one", ToolName: "subagent"}, {Provider: "two", ToolName: "subagent_two"}} {
		dispose, err := subagent.Bind(p.Service, p.Tools, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dispose()
	}
	if got := call(t, t.Context(), p, "subagent", "d", "task for one", nil); got.IsError || got.Output != "from one" {
		t.Fatalf("subagent = %+v", got)
	}
	if got := call(t, t.Context(), p, "subagent_two", "d", "task for two", nil); got.IsError || got.Output != "from two" {
		t.Fatalf("subagent_two = %+v", got)
	}
	if len(one.reqs) != 1 || one.reqs[0].Prompt != "task for one" || one.reqs[0].Name != "subagent" ||
		len(two.reqs) != 1 || two.reqs[0].Prompt != "task for two" || two.reqs[0].Name != "subagent_two" {
		t.Fatalf("one saw %+v, two saw %+v", one.reqs, two.reqs)
	}
}

// Mirrors "ignores lifecycle events for OTHER providers": another
// provider coming (with the other wording) and going neither re-registers
// nor removes the tool. The binding's own provider going away last proves
// the earlier events were handled: its observer sees events in order.
func TestBind_IgnoresLifecycleEventsForOtherProviders(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	disposeMine, _ := svc.RegisterProvider(stubProvider{name: "mine"})
	changes := bindWatched(t, svc, reg, subagent.Binding{Provider: "mine", ToolName: "subagent"}, nil)
	if !st.Recv(t, changes) {
		t.Fatal("the tool did not register")
	}
	disposeOther, _ := svc.RegisterProvider(stubProvider{name: "other", inherit: true})
	disposeOther()
	disposeMine()
	if st.Recv(t, changes) {
		t.Fatal("another provider's events re-registered the tool")
	}
	if _, ok := reg.Get("subagent"); ok {
		t.Fatal("the tool outlived its provider")
	}
	select {
	case c := <-changes:
		t.Fatalf("an extra change %v", c)
	default:
	}
}
