// This file holds the end-to-end harness: the test binary re-executes
// itself as dshd (the go-sdk TestMain trick), so every test drives a real
// dshd process over real pipes and sockets without a separate build.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/internal/testkit"
)

// asDshd, when set in the environment, makes the test binary run as dshd.
const asDshd = "DSHD_E2E_RUN_AS_DSHD"

// asWrapper, when a platform's tests set it, runs the test binary as a
// wrapper around dshd if the environment asks for one (ok).
var asWrapper func() (code int, ok bool)

// rssFileEnv, when set, makes the test binary a wrapper that runs the
// command in its arguments and writes that command's peak RSS (bytes)
// to the file it names. A process started by the test binary cannot be
// measured by its own rusage: Go starts children with vfork, and Linux
// counts in a child's ru_maxrss the high-water mark of the memory it
// ran in before exec, the test process's, which under -race after many
// tests is past every bound here. Started by the fresh, small wrapper,
// the daemon's ru_maxrss is its own.
// (The wrapper, rssWrapper, is Linux-only; the name is every build's,
// for testVars.)
const rssFileEnv = "DSHD_E2E_RSS_FILE"

func TestMain(m *testing.M) {
	// The variables that run this binary as something else are no
	// mistake of the dshd it runs.
	testVars = []string{asDshd, asMCPWriter, rssFileEnv}
	if asWrapper != nil {
		if code, ok := asWrapper(); ok {
			os.Exit(code)
		}
	}
	// As dshd, or as the sandbox helper a dshd under test re-executes
	// (whose environment is the command's, which may not say asDshd).
	if os.Getenv(asDshd) == "1" || len(os.Args) > 1 && os.Args[1] == "sandbox" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(asMCPWriter) != "" {
		os.Exit(mcpWriter())
	}
	goleak.VerifyTestMain(m)
}

// baseEnv is a clean environment for a child dshd: no DSHD_* settings, no
// model keys, and HOME/XDG dirs inside the test's temp dir so no user file
// is read or written.
func baseEnv(t testing.TB, extra ...string) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "DSHD_"), strings.HasSuffix(name, "_API_KEY"),
			name == "HOME", name == "GORACE", strings.HasPrefix(name, "XDG_"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		asDshd+"=1",
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		// A race-enabled child otherwise sleeps a second at exit.
		"GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"),
	)
	return append(env, extra...)
}

// proc is a dshd child process.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *lineLog
	done   chan struct{}
	err    error // Wait's result, after done
}

// opts configure a child dshd.
type opts struct {
	env []string // extra environment
	// stdin, when set, feeds the process instead of a pipe.
	stdin io.Reader
	// prefix, when set, runs dshd under this command (prlimit ... --,
	// ip netns exec NS).
	prefix []string
}

// start launches the test binary as `dshd args...` with pipes on stdin
// and stdout; stderr is collected line by line.
func start(t testing.TB, o opts, args ...string) *proc {
	t.Helper()
	exe := testkit.Executable(t)
	cmd := exec.Command(exe, args...)
	if len(o.prefix) > 0 {
		cmd = exec.Command(o.prefix[0], append(append(o.prefix[1:len(o.prefix):len(o.prefix)], exe), args...)...)
	}
	cmd.Env = baseEnv(t, o.env...)
	p := &proc{t: t, cmd: cmd, stderr: newLineLog(), done: make(chan struct{})}
	var err error
	if o.stdin != nil {
		cmd.Stdin = o.stdin
	} else if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// Our own pipe, not StdoutPipe: Wait closes a StdoutPipe's read end
	// once the process exits, which loses what a reader has not read yet,
	// and the goroutine below waits at once. This one ends in EOF after
	// the last byte the process wrote, and is closed after the test.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdout = r
	cmd.Stdout = w
	cmd.Stderr = p.stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		r.Close()
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(ctx context.Context) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-ctx.Done():
		p.t.Fatalf("dshd did not exit; stderr:\n%s", p.stderr)
	}
	return exitCode(p.t, "dshd", p.err)
}

// exitCode is the exit code of a process that ended with err; it fails t,
// naming what ran, when err is not an exit status.
func exitCode(t testing.TB, what string, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("%s: %v", what, err)
	return -1
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// runDshd runs `dshd args...` to completion and returns its exit code,
// stdout and stderr.
func runDshd(t testing.TB, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := start(t, opts{env: env, stdin: strings.NewReader("")}, args...)
	out := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(p.stdout)
		out <- b
	}()
	ctx := testkit.Context(t)
	code = p.wait(ctx)
	var b []byte
	select {
	case b = <-out:
	case <-ctx.Done():
		t.Fatalf("dshd exited but its stdout did not end; stderr:\n%s", p.stderr)
	}
	return code, string(b), p.stderr.String()
}

// endsOnSIGTERM sends the daemon SIGTERM and checks that it exits 0.
func endsOnSIGTERM(ctx context.Context, t *testing.T, p *proc) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, p.stderr)
	}
}

// testdataScript is the absolute path of the script name in testdata,
// which a daemon started elsewhere can run.
func testdataScript(t *testing.T, name string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return script
}

// linesWith returns the lines of l that hold every one of the words.
func linesWith(l *lineLog, words ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var got []string
	for _, line := range l.lines {
		if containsAll(line, words...) {
			got = append(got, line)
		}
	}
	return got
}

// lineLog collects a process's stderr and lets a test wait for a line.
type lineLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	lines   []string
	changed chan struct{}
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor waits for a line containing every one of the words.
func (l *lineLog) waitFor(ctx context.Context, words ...string) (string, error) {
	seen := 0
	for {
		l.mu.Lock()
		lines, ch := l.lines, l.changed
		l.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if containsAll(lines[seen], words...) {
				return lines[seen], nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("no stderr line with %q: %w", words, ctx.Err())
		}
	}
}

func containsAll(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// writeScript writes a scripted-model script and returns its path.
func writeScript(t testing.TB, script string) string {
	t.Helper()
	return testkit.Write(t, t.TempDir(), "script.json", script)
}

// The harness keeps every byte a dshd wrote to stdout for a reader that
// gets to it after the process exited (runDshd's reader, under load).
func TestHarnessStdoutIsReadableAfterTheProcessExits(t *testing.T) {
	p := start(t, opts{stdin: strings.NewReader("")}, "version")
	if code := p.wait(testkit.Context(t)); code != 0 {
		t.Fatalf("version: exit %d; stderr:\n%s", code, p.stderr)
	}
	b, err := io.ReadAll(p.stdout)
	if err != nil || !strings.HasPrefix(string(b), "dshd ") {
		t.Fatalf("stdout after exit: %q, %v", b, err)
	}
}
