//go:build unix

package acpprovider_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/sandbox"
)

// isolateEnv keeps children from reading the user's config or state, or
// carrying the test's own settings, and a race-enabled child from
// lingering at exit. home is a directory the test owns.
func isolateEnv(home string) {
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DSHD_") {
			os.Unsetenv(name)
		}
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
}

// The names the daemon gives the provider's settings, its connections'
// and its sandbox's (cmd/dshd/internal/daemon), so that the tests read
// the words a user reads.
var (
	daemonNames        = acpprovider.Settings{MaxRequests: "--max-child-requests", MaxTerminals: "--max-tasks", MaxTerminalOutput: "--task-output-limit", MaxReadBytes: "--max-read-bytes", MaxOutputBytes: "--max-child-output-bytes", MaxHeld: "--max-held-child-updates", StateDirOf: "--state-dir, DSHD_STATE_DIR or config file"}
	daemonLimitNames   = rpc.Settings{MaxQueuedInput: "--max-queued-input-bytes", MaxQueuedOutput: "--max-queued-output-bytes"}
	daemonSandboxNames = sandbox.Settings{Mode: "--sandbox", Fallback: "--sandbox-fallback", Network: "--sandbox-network", WritableRoots: "--sandbox-writable (sandboxWritableRoots in the config file)"}
)

// newProvider returns a provider with short grace periods and the
// daemon's names of the settings, closed when the test ends.
func newProvider(t testing.TB, o *acpprovider.Options) *acpprovider.Provider {
	t.Helper()
	var opts acpprovider.Options
	if o != nil {
		opts = *o
	}
	if opts.Settings == (acpprovider.Settings{}) {
		opts.Settings = daemonNames
	}
	if opts.Limits.Settings == (rpc.Settings{}) {
		opts.Limits.Settings = daemonLimitNames
	}
	if opts.Sandbox != nil && opts.Sandbox.Settings == (sandbox.Settings{}) {
		sb := *opts.Sandbox
		sb.Settings = daemonSandboxNames
		opts.Sandbox = &sb
	}
	if opts.EOFGrace == 0 {
		opts.EOFGrace = 300 * time.Millisecond
	}
	if opts.TermGrace == 0 {
		opts.TermGrace = 300 * time.Millisecond
	}
	if opts.CancelGrace == 0 {
		opts.CancelGrace = 2 * time.Second
	}
	if opts.HoldUnknown == 0 {
		opts.HoldUnknown = 300 * time.Millisecond
	}
	if opts.Self == "" {
		opts.Self = dshdBin
	}
	p, err := acpprovider.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// quote makes words for the binding's args/env syntax.
func quote(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// fakeBinding runs the test binary as a fake agent in mode.
func fakeBinding(mode string, env ...string) map[string]string {
	return map[string]string{
		"command": os.Args[0],
		"env":     quote(append([]string{fakeEnv + "=" + mode}, env...)...),
	}
}

// dshdArgs are the arguments of a child `dshd serve` on a script.
func dshdArgs(t testing.TB, script string, extra ...string) []string {
	return append([]string{"serve", "--model", "scripted:" + testdata(t, script), "--state-dir", t.TempDir(), "--mode", "ask"}, extra...)
}

// dshdBinding runs the test's dshd on a script.
func dshdBinding(t testing.TB, script string, extra ...string) map[string]string {
	return map[string]string{"command": dshdBin, "args": quote(dshdArgs(t, script, extra...)...)}
}

// recGate is a permission gate that records requests and answers with
// decide (Allowed when nil).
type recGate struct {
	decide func(tools.PermissionRequest) tools.Decision
	mu     sync.Mutex
	reqs   []tools.PermissionRequest
	asked  chan tools.PermissionRequest
}

func (g *recGate) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	g.mu.Lock()
	g.reqs = append(g.reqs, req)
	g.mu.Unlock()
	if g.asked != nil {
		g.asked <- req
	}
	if g.decide == nil {
		return tools.Allowed, nil
	}
	return g.decide(req), nil
}

func (g *recGate) requests() []tools.PermissionRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]tools.PermissionRequest(nil), g.reqs...)
}

// parentOpts configure newParent.
type parentOpts struct {
	expose subagents.Exposure
	gate   tools.Permission
	runner bool
	depth  int
	max    int
}

// newParent builds a real parent agent scope in a temporary workspace.
func newParent(t testing.TB, o parentOpts) *st.Parent {
	t.Helper()
	p := st.NewParent(t, st.ParentOptions{Expose: o.expose, Permission: o.gate, Depth: o.depth, MaxDepth: o.max})
	if o.runner {
		p.Env.Runner = localrun.New(nil)
	}
	return p
}

// progressLog collects progress reports.
type progressLog struct {
	mu   sync.Mutex
	all  []subagents.Progress
	text chan string
}

func newProgressLog() *progressLog { return &progressLog{text: make(chan string, 100)} }

func (l *progressLog) report(p subagents.Progress) {
	l.mu.Lock()
	l.all = append(l.all, p)
	l.mu.Unlock()
	select {
	case l.text <- p.Text:
	default:
	}
}

func (l *progressLog) last() subagents.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return subagents.Progress{}
	}
	return l.all[len(l.all)-1]
}

// waitText waits for a progress report whose text contains s.
func (l *progressLog) waitText(t testing.TB, s string) string {
	t.Helper()
	for {
		text := recv(t, l.text)
		if strings.Contains(text, s) {
			return text
		}
	}
}

// start starts a run and registers its disposal.
func start(t testing.TB, p *acpprovider.Provider, req subagents.StartRequest) subagents.Run {
	t.Helper()
	run, err := p.Start(t.Context(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { run.Dispose() })
	return run
}

// startWatched starts a run of prompt on binding under a fresh parent,
// its progress logged.
func startWatched(t testing.TB, p *acpprovider.Provider, binding map[string]string, prompt string) (subagents.Run, *progressLog) {
	t.Helper()
	parent := newParent(t, parentOpts{})
	progress := newProgressLog()
	run := start(t, p, subagents.StartRequest{Prompt: prompt, Parent: parent.Scope, Options: binding, Progress: progress.report})
	return run, progress
}

// wantError fails the test unless res ended with StopError and a
// diagnostic that contains each of parts.
func wantError(t testing.TB, res subagents.Result, parts ...string) {
	t.Helper()
	ok := res.StopReason == subagents.StopError
	for _, p := range parts {
		ok = ok && strings.Contains(res.Diagnostic, p)
	}
	if !ok {
		t.Fatalf("result = %+v", res)
	}
}

// startObserved registers p with the parent's service, observes the
// service's events and starts a run through it, so a test sees the run's
// start and end events as well as its result. All three are undone when
// the test ends.
func startObserved(t testing.TB, p *acpprovider.Provider, parent *st.Parent, req subagents.StartRequest) (subagents.Run, <-chan subagents.Event) {
	t.Helper()
	dispose, err := parent.Service.RegisterProvider(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dispose)
	events := make(chan subagents.Event, 10)
	t.Cleanup(parent.Service.Observe(func(ev subagents.Event) { events <- ev }))
	run, err := parent.Service.Start(t.Context(), acpprovider.Name, req)
	if err != nil {
		t.Fatalf("Start = %v", err)
	}
	t.Cleanup(func() { run.Dispose() })
	return run, events
}

// nextEvent skips events until one of kind arrives, under the watchdog.
func nextEvent(t testing.TB, events <-chan subagents.Event, kind subagents.EventKind) subagents.Event {
	t.Helper()
	ev := recv(t, events)
	for ev.Kind != kind {
		ev = recv(t, events)
	}
	return ev
}

// wait waits for a run's result under the watchdog.
func wait(t testing.TB, run subagents.Run) subagents.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	res, err := run.Wait(ctx)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return res
}
