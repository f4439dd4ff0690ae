// This file wires an in-process server the way cmd/dshd's daemon does
// (built-in tools, spawn and fork providers, the default subagent
// bindings, a real session store) and drives it through a real
// rpc.ClientSideConn over net.Pipe with a recording fake editor.

package server_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/noeditor"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/subagent"
	"github.com/dshd/dshd/tools/tasks"

	"github.com/dshd/dshd/acp/rpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hopts configure a harness.
type hopts struct {
	// model replaces the scripted model built from script.
	model  llm.Model
	script string
	caps   acp.ClientCapabilities
	mode   permission.Mode
	// bindings are bound on top of the default ones.
	bindings []subagent.Binding
	// opts, when set, changes the server's options before it starts.
	opts func(*server.Options)
}

// harness is a server with one connected fake editor.
type harness struct {
	t      testing.TB
	ctx    context.Context
	srv    *server.Server
	store  *session.Store
	model  string
	client *rpc.ClientSideConn
	ed     *editor
	cwd    string
}

func newHarness(t testing.TB, o hopts) *harness {
	t.Helper()
	store, err := session.NewStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.script == "" {
		o.script = `{"rules": [{"text": "You said: {{user}}"}]}`
	}
	scriptedModel, err := scripted.Parse([]byte(o.script))
	if err != nil {
		t.Fatal(err)
	}
	infos, _ := scriptedModel.Models(context.Background())
	var model llm.Model = scriptedModel
	if o.model != nil {
		model = o.model
	}
	base := tools.NewRegistry(nil)
	for _, tl := range append(builtin.Builtins(nil), tasks.Tools()...) {
		if _, err := base.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	svc := subagents.NewService(nil)
	for _, p := range []subagents.Provider{spawn.New(nil), fork.New(nil)} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	for _, b := range append(subagent.DefaultBindings(), o.bindings...) {
		dispose, err := subagent.Bind(svc, base, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	so := server.Options{
		Name:         "dshd",
		Version:      "test",
		Store:        store,
		Model:        model,
		DefaultModel: infos[0].ID,
		Models:       func() []llm.Info { return infos },
		Tools:        base,
		Subagents:    svc,
		Agents:       &agent.Registry{},
		Mode:         o.mode,
	}
	if o.opts != nil {
		o.opts(&so)
	}
	srv, err := server.New(so)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: testkit.Context(t), srv: srv, store: store, model: infos[0].ID, cwd: t.TempDir()}
	h.ed = newEditor()
	h.connect(o.caps)
	return h
}

// connect opens a client connection and runs initialize.
func (h *harness) connect(caps acp.ClientCapabilities) {
	h.t.Helper()
	agentEnd, clientEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.srv.ServeConn(context.Background(), agentEnd)
	}()
	h.client = rpc.NewClientSideConn(clientEnd, h.ed, nil)
	client := h.client
	h.t.Cleanup(func() {
		client.Close()
		<-served
	})
	if _, err := h.client.Initialize(h.ctx, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1, ClientCapabilities: caps}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) newSession() acp.SessionID {
	h.t.Helper()
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.SessionID
}

func (h *harness) prompt(sid acp.SessionID, text string) (acp.StopReason, error) {
	resp, err := h.client.Prompt(h.ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		return "", err
	}
	return resp.StopReason, nil
}

// mustPrompt runs a turn and checks its stop reason.
func (h *harness) mustPrompt(sid acp.SessionID, text string, want acp.StopReason) {
	h.t.Helper()
	got, err := h.prompt(sid, text)
	if err != nil {
		h.t.Fatalf("prompt %q: %v", text, err)
	}
	if got != want {
		h.t.Fatalf("prompt %q: stop reason %q, want %q", text, got, want)
	}
}

// promptAsync runs a turn on its own goroutine.
func (h *harness) promptAsync(sid acp.SessionID, text string) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		r, err := h.prompt(sid, text)
		ch <- promptResult{r, err}
	}()
	return ch
}

type promptResult struct {
	stop acp.StopReason
	err  error
}

func (h *harness) await(ch <-chan promptResult) promptResult {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-h.ctx.Done():
		h.t.Fatal("the prompt never answered")
	}
	return promptResult{}
}

// waitFor waits until ch is closed; what says what a hang never saw.
func (h *harness) waitFor(ch <-chan struct{}, what string) {
	h.t.Helper()
	select {
	case <-ch:
	case <-h.ctx.Done():
		h.t.Fatal(what)
	}
}

// cancel sends session/cancel for sid.
func (h *harness) cancel(sid acp.SessionID) {
	h.t.Helper()
	if err := h.client.Cancel(h.ctx, &acp.CancelNotification{SessionID: sid}); err != nil {
		h.t.Fatal(err)
	}
}

// cancelTurn cancels sid's running turn and checks that it answers
// cancelled, without an error.
func (h *harness) cancelTurn(sid acp.SessionID, turn <-chan promptResult) {
	h.t.Helper()
	h.cancel(sid)
	if r := h.await(turn); r.err != nil || r.stop != acp.StopReasonCancelled {
		h.t.Fatalf("turn %v, %v; want cancelled", r.stop, r.err)
	}
}

// wantCode checks an error's JSON-RPC code.
func wantCode(t testing.TB, what string, err error, code int) *acp.Error {
	t.Helper()
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Errorf("%s: %v, want code %d", what, err, code)
		return nil
	}
	return ae
}

// editor is the fake ACP client: it records every update and client call
// and answers through per-method hooks; it has no elicitation.
type editor struct {
	noeditor.Methods // elicitation/create: method not found

	mu      sync.Mutex
	updates []*acp.SessionNotification
	calls   map[string]int // client calls by method
	changed chan struct{}

	permission     func(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error)
	readFile       func(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error)
	writeFile      func(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error)
	createTerminal func(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error)
	output         func(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error)
	waitExit       func(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error)
}

func newEditor() *editor { return &editor{calls: map[string]int{}, changed: make(chan struct{})} }

// set installs hooks under the lock.
func (e *editor) set(fn func(e *editor)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e)
}

func (e *editor) record(call string, n *acp.SessionNotification) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n != nil {
		e.updates = append(e.updates, n)
	}
	if call != "" {
		e.calls[call]++
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

// of returns the updates received so far for sid ("" for all).
func (e *editor) of(sid acp.SessionID) []acp.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []acp.SessionUpdate
	for _, n := range e.updates {
		if sid == "" || n.SessionID == sid {
			out = append(out, n.Update)
		}
	}
	return out
}

func (e *editor) all() []*acp.SessionNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.updates)
}

// reset forgets the updates and calls received so far.
func (e *editor) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = nil
	clear(e.calls)
}

func (e *editor) callsOf(method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[method]
}

// waitUntil waits until ok holds over the editor's state.
func (e *editor) waitUntil(ctx context.Context, t testing.TB, what string, ok func() bool) {
	t.Helper()
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (e *editor) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	e.record("", n)
	return nil
}

func (e *editor) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	e.record(acp.MethodSessionRequestPermission, nil)
	// A person answers later: let the updates after it through meanwhile.
	rpc.Detach(ctx)
	return callHook(ctx, e, &e.permission, req, func() (*acp.RequestPermissionResponse, error) {
		return &acp.RequestPermissionResponse{Outcome: acp.Selected("reject_once")}, nil
	})
}

func (e *editor) ReadTextFile(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	e.record(acp.MethodFsReadTextFile, nil)
	return callHook(ctx, e, &e.readFile, req, methodNotFound)
}

func (e *editor) WriteTextFile(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	e.record(acp.MethodFsWriteTextFile, nil)
	return callHook(ctx, e, &e.writeFile, req, methodNotFound)
}

func (e *editor) CreateTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	e.record(acp.MethodTerminalCreate, nil)
	return callHook(ctx, e, &e.createTerminal, req, methodNotFound)
}

func (e *editor) TerminalOutput(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	e.record(acp.MethodTerminalOutput, nil)
	return callHook(ctx, e, &e.output, req, func() (*acp.TerminalOutputResponse, error) { return &acp.TerminalOutputResponse{}, nil })
}

func (e *editor) WaitForTerminalExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	e.record(acp.MethodTerminalWaitForExit, nil)
	rpc.Detach(ctx) // a command runs for a while
	return callHook(ctx, e, &e.waitExit, req, methodNotFound)
}

// callHook answers req with the hook the test set in *hook, read under
// the lock, or with fallback when it set none.
func callHook[Req, Resp any](ctx context.Context, e *editor, hook *func(context.Context, *Req) (*Resp, error), req *Req, fallback func() (*Resp, error)) (*Resp, error) {
	e.mu.Lock()
	h := *hook
	e.mu.Unlock()
	if h == nil {
		return fallback()
	}
	return h(ctx, req)
}

// methodNotFound is the answer of an editor without the method.
func methodNotFound[Resp any]() (*Resp, error) { return nil, acp.ErrMethodNotFound }

func (e *editor) KillTerminal(context.Context, *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	e.record(acp.MethodTerminalKill, nil)
	return &acp.KillTerminalResponse{}, nil
}

func (e *editor) ReleaseTerminal(context.Context, *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	e.record(acp.MethodTerminalRelease, nil)
	return &acp.ReleaseTerminalResponse{}, nil
}

// agentText concatenates the agent_message_chunk texts among us.
func agentText(us []acp.SessionUpdate) string {
	var s string
	for _, u := range us {
		if c, ok := u.(*acp.AgentMessageChunk); ok {
			if t, ok := c.Content.(*acp.TextContent); ok {
				s += t.Text
			}
		}
	}
	return s
}

// ofType returns the updates of type T among us.
func ofType[T acp.SessionUpdate](us []acp.SessionUpdate) []T {
	var out []T
	for _, u := range us {
		if v, ok := u.(T); ok {
			out = append(out, v)
		}
	}
	return out
}
