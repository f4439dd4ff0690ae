//go:build unix

package acpprovider_test

// These tests pin the provider to the seed system's own tests
// (deepseek-harness, packages/subagent/subagent-acp/tests/subagent-acp.spec.ts):
// each is named after the case it mirrors, and each drives a real child
// process over real pipes.

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// Mirrors "settles aborted WITHOUT spawning the child when the signal is
// already aborted": the command would create a sentinel file if it ran.
func TestStart_SettlesAbortedWithoutSpawningTheChildWhenTheSignalIsAlreadyAborted(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	sentinel := filepath.Join(t.TempDir(), "spawned")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	run, err := p.Start(ctx, subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Options: map[string]string{"command": "touch", "args": quote(sentinel)}})
	if err != nil {
		t.Fatalf("Start = %v, want a run that settled aborted", err)
	}
	res := wait(t, run)
	if res.StopReason != subagents.StopAborted || res.Output != "" || res.Diagnostic != "" {
		t.Fatalf("result = %+v", res)
	}
	// Cancel and Dispose of the inert run are safe no-ops.
	run.Cancel()
	if err := run.Dispose(); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if _, err := os.Stat(sentinel); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran: %v", err)
	}
	checkNoProcesses(t)
}

// Mirrors "honors a cancel that races AHEAD of newSession (no session id
// yet) without running the prompt": the start's context ends while the
// agent holds session/new.
func TestStart_HonorsACancelThatRacesAheadOfNewSessionWithoutRunningThePrompt(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inNewSession := make(chan error, 1)
	go func() {
		// Blocks until the fake opens it in session/new.
		f, err := os.Open(fifo)
		if err == nil {
			_, err = bufio.NewReader(f).ReadString('\n')
			f.Close()
		}
		inNewSession <- err
	}()
	t.Cleanup(func() {
		// Unblock the reader if the fake never came.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.WriteString("\n")
			f.Close()
		}
	})
	go func() {
		if err := <-inNewSession; err != nil {
			t.Errorf("reading the FIFO: %v", err)
		}
		cancel()
	}()
	run, err := p.Start(ctx, subagents.StartRequest{Prompt: "echo should not run", Parent: parent.Scope, Options: fakeBinding(modeSlowNew, fakeFIFOEnv+"="+fifo)})
	if err != nil {
		t.Fatalf("Start = %v, want a run that settled aborted", err)
	}
	res := wait(t, run)
	if res.StopReason != subagents.StopAborted || res.Output != "" {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	checkNoProcesses(t)
}

// Mirrors "resolves error (not reject) when the spawn command does not
// exist": a transport failure is a run that ends with StopError, like a
// crash mid-turn, never an error from Start.
func TestStart_ResolvesErrorNotRejectWhenTheSpawnCommandDoesNotExist(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Options: map[string]string{"command": "/nonexistent/acp-agent-binary"}})
	if err != nil {
		t.Fatalf("Start = %v, want a run that settled with an error", err)
	}
	res := wait(t, run)
	wantError(t, res, "could not be started", "/nonexistent/acp-agent-binary")
	if res.Output != "" {
		t.Fatalf("result = %+v", res)
	}
	if err := run.Dispose(); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	checkNoProcesses(t)
}

// Mirrors "resolves error via the provider (real load path) when the
// command does not exist": through the service, with its start and end
// events around the failed run.
func TestStart_ResolvesErrorViaTheProviderRealLoadPathWhenTheCommandDoesNotExist(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run, events := startObserved(t, p, parent, subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Options: map[string]string{"command": "/nonexistent/acp-agent-binary"}})
	if res := wait(t, run); res.StopReason != subagents.StopError {
		t.Fatalf("result = %+v", res)
	}
	nextEvent(t, events, subagents.EventStart)
	if ev := nextEvent(t, events, subagents.EventEnd); ev.StopReason != subagents.StopError {
		t.Fatalf("end event = %+v", ev)
	}
}

// Mirrors "reports a flattened child failure through onError (preserved,
// not silently lost)": the provider's log gets the failure once.
func TestStart_ReportsAFlattenedChildFailureThroughTheLog(t *testing.T) {
	logs := &recordLog{}
	p := newProvider(t, &acpprovider.Options{Logger: slog.New(logs)})
	parent := newParent(t, parentOpts{})
	run := start(t, p, subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Options: map[string]string{"command": "/nonexistent/acp-agent-binary"}})
	if res := wait(t, run); res.StopReason != subagents.StopError {
		t.Fatalf("result = %+v", res)
	}
	if got := logs.matching(slog.LevelWarn, "/nonexistent/acp-agent-binary"); got != 1 {
		t.Fatalf("%d warnings name the failure, want 1; log:\n%s", got, logs)
	}
}

// Mirrors "drops credential-shaped ambient vars but keeps the explicit
// extras", in a real child process: names that look like credentials
// (secret.Name: KEY, SECRET, TOKEN…) stay behind unless the binding passes them explicitly (env=,
// or pass-env= from the daemon's environment).
func TestEnv_TheChildDropsCredentialShapedAmbientVarsButKeepsTheExplicitExtras(t *testing.T) {
	t.Setenv("ACPPROVIDER_TEST_SECRET_TOKEN", "leak-me")
	t.Setenv("acpprovider_lower_api_key", "leak-me")
	t.Setenv("ACPPROVIDER_Session_Secret", "leak-me")
	t.Setenv("ACPPROVIDER_PASSED_TOKEN", "passed")
	t.Setenv("ACPPROVIDER_PLAIN", "plain")
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	opts := fakeBinding(modeAgent, "EXPLICIT_API_KEY=explicit")
	opts["pass-env"] = "ACPPROVIDER_PASSED_TOKEN ACPPROVIDER_NOT_SET_KEY"
	names := "ACPPROVIDER_TEST_SECRET_TOKEN acpprovider_lower_api_key ACPPROVIDER_Session_Secret EXPLICIT_API_KEY ACPPROVIDER_PASSED_TOKEN ACPPROVIDER_NOT_SET_KEY ACPPROVIDER_PLAIN"
	run := start(t, p, subagents.StartRequest{Prompt: "env " + names, Parent: parent.Scope, Options: opts})
	res := wait(t, run)
	want := "ACPPROVIDER_TEST_SECRET_TOKEN unset acpprovider_lower_api_key unset ACPPROVIDER_Session_Secret unset " +
		"EXPLICIT_API_KEY=explicit ACPPROVIDER_PASSED_TOKEN=passed ACPPROVIDER_NOT_SET_KEY unset ACPPROVIDER_PLAIN=plain"
	if res.Output != want {
		t.Fatalf("the child's environment:\n got %s\nwant %s", res.Output, want)
	}
	t.Run("the default child gets the daemon's extras and nothing credential-shaped", func(t *testing.T) {
		p := newProvider(t, &acpprovider.Options{Self: os.Args[0], DefaultArgs: []string{}, DefaultEnv: []string{fakeEnv + "=" + modeAgent, "MODEL_API_KEY=k"}})
		run := start(t, p, subagents.StartRequest{Prompt: "env MODEL_API_KEY ACPPROVIDER_TEST_SECRET_TOKEN ACPPROVIDER_PLAIN", Parent: parent.Scope})
		if res := wait(t, run); res.Output != "MODEL_API_KEY=k ACPPROVIDER_TEST_SECRET_TOKEN unset ACPPROVIDER_PLAIN=plain" {
			t.Fatalf("the child's environment: %s", res.Output)
		}
	})
}

// Mirrors the provider-load case "rejects a non-positive dispose grace at
// load": New refuses a negative duration, naming the setting. (Zero is
// Go's "unset" and means the default, see Options.)
func TestNew_RejectsANonPositiveDisposeGraceAtLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    acpprovider.Options
	}{
		{"EOFGrace", acpprovider.Options{EOFGrace: -1}},
		{"TermGrace", acpprovider.Options{TermGrace: -time.Second}},
		{"CancelGrace", acpprovider.Options{CancelGrace: -1}},
		{"StartTimeout", acpprovider.Options{StartTimeout: -1}},
		{"HoldUnknown", acpprovider.Options{HoldUnknown: -1}},
		{"ProgressInterval", acpprovider.Options{ProgressInterval: -1}},
		{"MaxRequests", acpprovider.Options{MaxRequests: -1}},
		{"MaxTerminals", acpprovider.Options{MaxTerminals: -1}},
		{"MaxOutputBytes", acpprovider.Options{MaxOutputBytes: -1}},
		{"MaxHeld", acpprovider.Options{MaxHeld: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := acpprovider.New(&tc.o)
			if err == nil || p != nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), "positive") {
				t.Fatalf("New = %v, %v; want an error naming %s", p, err, tc.name)
			}
		})
	}
	if _, err := acpprovider.New(nil); err != nil {
		t.Fatalf("New(nil) = %v", err)
	}
}

// The default graces keep dsh's bounds: a cancelled child is no longer
// waited for after at most 4 s (the bound of dsh's "settles aborted on
// cancel even when the child IGNORES session/cancel"), and the stdin EOF
// window is wider than the SIGTERM one (dsh's "dispose gives the child an
// EOF window that outlasts the SIGTERM grace").
func TestDefaults_TheGracesKeepTheSeedsBounds(t *testing.T) {
	if acpprovider.DefaultCancelGrace <= 0 || acpprovider.DefaultCancelGrace > 4*time.Second {
		t.Errorf("DefaultCancelGrace = %s, want within (0, 4s]", acpprovider.DefaultCancelGrace)
	}
	if acpprovider.DefaultTermGrace <= 0 || acpprovider.DefaultEOFGrace <= acpprovider.DefaultTermGrace {
		t.Errorf("DefaultEOFGrace = %s, DefaultTermGrace = %s: want 0 < term < EOF", acpprovider.DefaultEOFGrace, acpprovider.DefaultTermGrace)
	}
}

// Mirrors "dispose gives the child an EOF window that outlasts the SIGTERM
// grace (graceful flush)": a child that flushes for longer than the SIGTERM
// grace after its stdin closes is not signalled before it is done.
func TestDispose_GivesTheChildAnEOFWindowThatOutlastsTheSIGTERMGrace(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{EOFGrace: watchdog, TermGrace: flushTime / 30})
	marker := filepath.Join(t.TempDir(), "flushed")
	run, progress := startWatched(t, p, fakeBinding(modeFlush, fakeMarkerEnv+"="+marker), "pid")
	progress.waitText(t, "pid=")
	if err := run.Dispose(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "flushed" {
		t.Fatalf("the child's flush did not land: %q, %v", b, err)
	}
	checkNoProcesses(t)
}

// Mirrors "escalates to SIGTERM for a child that ignores EOF but is not
// SIGTERM-trapping": the middle rung fires (the child's SIGTERM handler
// runs; a SIGKILL could not be caught).
func TestDispose_EscalatesToSIGTERMForAChildThatIgnoresEOFButIsNotSIGTERMTrapping(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{EOFGrace: 10 * time.Millisecond, TermGrace: watchdog})
	marker := filepath.Join(t.TempDir(), "sigterm")
	run, progress := startWatched(t, p, fakeBinding(modeTermFlush, fakeMarkerEnv+"="+marker), "pid")
	pid := pidFrom(t, progress.waitText(t, "pid="))
	if err := run.Dispose(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "sigterm" {
		t.Fatalf("the child never saw SIGTERM: %q, %v", b, err)
	}
	checkNoProcesses(t, pid)
}

// Mirrors "settles aborted on cancel even when the child IGNORES
// session/cancel (non-cooperative)": the run stops waiting after the
// cancel grace, and Dispose still reaps the process.
func TestCancel_SettlesAbortedEvenWhenTheChildIgnoresSessionCancel(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{CancelGrace: 100 * time.Millisecond})
	run, progress := startWatched(t, p, fakeBinding(modeAgent), "deaf")
	progress.waitText(t, "ready")
	run.Cancel()
	res := wait(t, run)
	if res.StopReason != subagents.StopAborted || res.Output != "ready" {
		t.Fatalf("result = %+v", res)
	}
	if err := run.Dispose(); err != nil {
		t.Fatal(err)
	}
	checkNoProcesses(t)
}

// Mirrors "settles aborted when the child crashes (tears the pipe) AFTER a
// cancel": the torn pipe is the cancel surfacing, not an error.
func TestCancel_SettlesAbortedWhenTheChildCrashesAfterACancel(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, fakeBinding(modeAgent), "crashoncancel")
	progress.waitText(t, "ready")
	run.Cancel()
	if res := wait(t, run); res.StopReason != subagents.StopAborted || res.Diagnostic != "" {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	checkNoProcesses(t)
}

// Mirrors "maps a max_tokens stop reason", "maps a refusal stop reason"
// and acpStopReason's "maps each ACP stop reason to the harness
// vocabulary" / "treats an unknown terminal reason as an error", each
// through a real child's session/prompt answer.
func TestRun_MapsEachChildStopReasonOntoTheRunsStopReason(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	for _, tc := range []struct {
		name, reason string
		want         subagents.StopReason
		diagnostic   string
	}{
		{"maps end_turn to completed", "end_turn", subagents.StopCompleted, ""},
		{"maps a max_tokens stop reason", "max_tokens", subagents.StopMaxTokens, ""},
		{"maps a refusal stop reason", "refusal", subagents.StopRefusal, ""},
		{"maps cancelled to aborted", "cancelled", subagents.StopAborted, ""},
		{"maps the turn limit to an error saying so", "max_turn_requests", subagents.StopError, "limit of model requests"},
		{"treats an unknown terminal reason as an error", "something-new", subagents.StopError, `unknown stop reason "something-new"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := start(t, p, subagents.StartRequest{Prompt: "stop " + tc.reason + " cut off", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
			res := wait(t, run)
			if res.StopReason != tc.want || res.Output != "cut off" || !strings.Contains(res.Diagnostic, tc.diagnostic) || (tc.diagnostic == "") != (res.Diagnostic == "") {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}

// Mirrors "consumes a non-message update (a thought) without adding it to
// the output".
func TestRun_ConsumesAThoughtWithoutAddingItToTheOutput(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, fakeBinding(modeAgent), "think final answer")
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "final answer" || res.LastMessage == nil || res.LastMessage.Content != "final answer" {
		t.Fatalf("result = %+v", res)
	}
	if got := progress.last().Text; got != "final answer" {
		t.Fatalf("progress text = %q", got)
	}
}

// recordLog is a slog handler that keeps every record.
type recordLog struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordLog) WithGroup(string) slog.Handler            { return l }

func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}

// matching counts the records at level whose message or attributes
// contain s.
func (l *recordLog) matching(level slog.Level, s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.records {
		if r.Level == level && strings.Contains(recordText(r), s) {
			n++
		}
	}
	return n
}

func (l *recordLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.records {
		b.WriteString(r.Level.String() + " " + recordText(r) + "\n")
	}
	return b.String()
}

func recordText(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	return b.String()
}
