package subagents_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	return st.Recv(t, ch)
}

// fakeProvider is a provider whose runs the test settles by hand.
type fakeProvider struct {
	name    string
	caps    subagents.Capabilities
	inherit bool
	starts  atomic.Int32
	start   func(ctx context.Context, req subagents.StartRequest) (subagents.Run, error)
}

func (p *fakeProvider) Name() string                         { return p.name }
func (p *fakeProvider) Capabilities() subagents.Capabilities { return p.caps }
func (p *fakeProvider) InheritsParentContext() bool          { return p.inherit }
func (p *fakeProvider) Start(ctx context.Context, req subagents.StartRequest) (subagents.Run, error) {
	p.starts.Add(1)
	if p.start != nil {
		return p.start(ctx, req)
	}
	return newFakeRun("run-1", subagents.Result{StopReason: subagents.StopCompleted, Output: "ok"}, nil), nil
}

type fakeRun struct {
	id       string
	res      subagents.Result
	err      error
	done     chan struct{}
	settle   sync.Once
	disposed atomic.Int32
}

func newFakeRun(id string, res subagents.Result, err error) *fakeRun {
	return &fakeRun{id: id, res: res, err: err, done: make(chan struct{})}
}

func (r *fakeRun) finish()    { r.settle.Do(func() { close(r.done) }) }
func (r *fakeRun) ID() string { return r.id }
func (r *fakeRun) Wait(ctx context.Context) (subagents.Result, error) {
	select {
	case <-r.done:
		return r.res, r.err
	case <-ctx.Done():
		return subagents.Result{}, ctx.Err()
	}
}
func (r *fakeRun) Cancel() { r.res.StopReason = subagents.StopAborted; r.finish() }
func (r *fakeRun) Dispose() error {
	r.disposed.Add(1)
	r.finish()
	return nil
}

type steerRun struct{ *fakeRun }

func (steerRun) SendMessage(context.Context, string) error { return nil }

type resumeRun struct{ *fakeRun }

func (r resumeRun) Resume(context.Context, string) (subagents.Run, error) {
	return newFakeRun(r.id, subagents.Result{StopReason: subagents.StopCompleted}, nil), nil
}

func parentScope() *subagents.Scope { return &subagents.Scope{SessionID: "s_main"} }

// events subscribes to svc and returns a channel of every event.
func events(t *testing.T, svc *subagents.Service) <-chan subagents.Event {
	ch := make(chan subagents.Event, 64)
	stop := svc.Observe(func(ev subagents.Event) { ch <- ev })
	t.Cleanup(stop)
	return ch
}

func TestRegisterProvider_NameClashIsDuplicateProvider(t *testing.T) {
	svc := subagents.NewService(nil)
	if _, err := svc.RegisterProvider(&fakeProvider{name: "spawn"}); err != nil {
		t.Fatal(err)
	}
	_, err := svc.RegisterProvider(&fakeProvider{name: "spawn"})
	if !errors.Is(err, subagents.ErrDuplicateProvider) {
		t.Fatalf("err = %v, want DUPLICATE_PROVIDER", err)
	}
	var se *subagents.Error
	if !errors.As(err, &se) || se.Code != subagents.CodeDuplicateProvider || !strings.Contains(se.Error(), `"spawn"`) {
		t.Fatalf("err = %#v, want an *Error naming the provider", err)
	}
	if errors.Is(err, subagents.ErrNoProvider) {
		t.Fatal("a DUPLICATE_PROVIDER error matches NO_PROVIDER")
	}
}

func TestRegisterProvider_DisposerUnregistersAndIsIdempotent(t *testing.T) {
	svc := subagents.NewService(nil)
	dispose, err := svc.RegisterProvider(&fakeProvider{name: "spawn"})
	if err != nil {
		t.Fatal(err)
	}
	dispose()
	if _, ok := svc.Provider("spawn"); ok {
		t.Fatal("provider still registered after dispose")
	}
	again := &fakeProvider{name: "spawn"}
	if _, err := svc.RegisterProvider(again); err != nil {
		t.Fatalf("re-register after dispose: %v", err)
	}
	dispose() // a stale disposer must not remove the newer provider
	if p, ok := svc.Provider("spawn"); !ok || p != again {
		t.Fatal("a second call of an old disposer removed the newer provider")
	}
}

func TestRegisterProvider_AddingAndRemovingAreAnnounced(t *testing.T) {
	svc := subagents.NewService(nil)
	ch := events(t, svc)
	dispose, _ := svc.RegisterProvider(&fakeProvider{name: "fork"})
	dispose()
	dispose()
	if ev := recv(t, ch); ev.Kind != subagents.EventProviderAdded || ev.Provider != "fork" {
		t.Fatalf("first event = %+v", ev)
	}
	if ev := recv(t, ch); ev.Kind != subagents.EventProviderRemoved || ev.Provider != "fork" {
		t.Fatalf("second event = %+v", ev)
	}
	svc.RegisterProvider(&fakeProvider{name: "marker"})
	if ev := recv(t, ch); ev.Provider != "marker" {
		t.Fatalf("an idempotent second dispose announced again: %+v", ev)
	}
}

func TestProvider_LookupReturnsFalseWhenAbsent(t *testing.T) {
	svc := subagents.NewService(nil)
	p := &fakeProvider{name: "spawn"}
	svc.RegisterProvider(p)
	if got, ok := svc.Provider("spawn"); !ok || got != p {
		t.Fatal("registered provider not found")
	}
	if _, ok := svc.Provider("acp"); ok {
		t.Fatal("absent provider found")
	}
}

func TestList_NamesInInsertionOrder(t *testing.T) {
	svc := subagents.NewService(nil)
	for _, n := range []string{"spawn", "acp", "fork", "b"} {
		svc.RegisterProvider(&fakeProvider{name: n})
	}
	if got, want := svc.List(), []string{"spawn", "acp", "fork", "b"}; !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
}

func TestService_ProvidersCoexistAndArePickedByName(t *testing.T) {
	svc := subagents.NewService(nil)
	a, b := &fakeProvider{name: "spawn"}, &fakeProvider{name: "acp"}
	svc.RegisterProvider(a)
	svc.RegisterProvider(b)
	run, err := svc.Start(t.Context(), "acp", subagents.StartRequest{Prompt: "x", Parent: parentScope()})
	if err != nil {
		t.Fatal(err)
	}
	run.Dispose()
	if a.starts.Load() != 0 || b.starts.Load() != 1 {
		t.Fatalf("starts: spawn=%d acp=%d, want 0 and 1", a.starts.Load(), b.starts.Load())
	}
}

func TestStart_NoProviderWhenAbsent(t *testing.T) {
	svc := subagents.NewService(nil)
	_, err := svc.Start(t.Context(), "nope", subagents.StartRequest{Parent: parentScope()})
	if !errors.Is(err, subagents.ErrNoProvider) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want NO_PROVIDER naming the provider", err)
	}
}

func TestStart_UnsupportedCapabilityRejectedBeforeAnyChildExists(t *testing.T) {
	zero := 0
	all := subagents.Capabilities{OutputSchema: true, DepthLimit: true, ToolFilter: true}
	cases := []struct {
		name string
		caps subagents.Capabilities
		req  subagents.StartRequest
		want string
	}{
		{"an output schema needs the outputSchema capability", subagents.Capabilities{DepthLimit: true, ToolFilter: true},
			subagents.StartRequest{OutputSchema: []byte(`{"type":"object"}`)}, "outputSchema"},
		{"a depth limit needs the depthLimit capability", subagents.Capabilities{OutputSchema: true, ToolFilter: true},
			subagents.StartRequest{DepthLimit: &zero}, "depthLimit"},
		{"a tool filter needs the toolFilter capability", subagents.Capabilities{OutputSchema: true, DepthLimit: true},
			subagents.StartRequest{ToolFilter: &subagents.ToolFilter{Deny: []string{"x"}}}, "toolFilter"},
		{"the first unmet capability is named", subagents.Capabilities{},
			subagents.StartRequest{OutputSchema: []byte(`{}`), DepthLimit: &zero, ToolFilter: &subagents.ToolFilter{}}, "outputSchema"},
		{"the first unmet capability is named after met ones", subagents.Capabilities{OutputSchema: true},
			subagents.StartRequest{OutputSchema: []byte(`{}`), DepthLimit: &zero, ToolFilter: &subagents.ToolFilter{}}, "depthLimit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := subagents.NewService(nil)
			p := &fakeProvider{name: "p", caps: tc.caps}
			svc.RegisterProvider(p)
			ch := events(t, svc)
			tc.req.Parent = parentScope()
			_, err := svc.Start(t.Context(), "p", tc.req)
			if !errors.Is(err, subagents.ErrUnsupportedCapability) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want UNSUPPORTED_CAPABILITY naming %s", err, tc.want)
			}
			if !strings.Contains(err.Error(), `provider "p"`) {
				t.Fatalf("err = %v, want it to name the provider", err)
			}
			if p.starts.Load() != 0 {
				t.Fatal("the provider was asked to start a child")
			}
			expectNothingBefore(t, svc, ch)
		})
	}
	t.Run("a provider declaring everything accepts all of them", func(t *testing.T) {
		svc := subagents.NewService(nil)
		svc.RegisterProvider(&fakeProvider{name: "p", caps: all})
		run, err := svc.Start(t.Context(), "p", subagents.StartRequest{Parent: parentScope(), OutputSchema: []byte(`{}`), DepthLimit: &zero, ToolFilter: &subagents.ToolFilter{}})
		if err != nil {
			t.Fatal(err)
		}
		run.Dispose()
	})
}

// expectNothingBefore registers a marker provider and checks that its
// provider-added is the next event: nothing was announced before it.
func expectNothingBefore(t *testing.T, svc *subagents.Service, ch <-chan subagents.Event) {
	t.Helper()
	dispose, err := svc.RegisterProvider(&fakeProvider{name: "marker"})
	if err != nil {
		t.Fatal(err)
	}
	defer dispose()
	if ev := recv(t, ch); ev.Kind != subagents.EventProviderAdded || ev.Provider != "marker" {
		t.Fatalf("unexpected event %+v", ev)
	}
}
