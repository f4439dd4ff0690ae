// End-to-end tests of how `dshd prompt` reports what went wrong: the
// missing key's advice, each failure once, a failed tool's reason, the
// model timeout, the live line on a terminal (and never elsewhere), and a
// long Retry-After.

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// journals lists the session journals under a state dir.
func journals(t testing.TB, state string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(state, "sessions", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPromptWithoutAKeyPrintsTheAdviceACPClientsGetOnce(t *testing.T) {
	state := t.TempDir()
	code, stdout, stderr := runDshd(t, nil, "prompt", "--state-dir", state, "--cwd", t.TempDir(), "hi")
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing; stderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "Set DEEPSEEK_API_KEY"); n != 1 {
		t.Errorf("the advice to set DEEPSEEK_API_KEY is printed %d times, want once:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "Authentication required") {
		t.Errorf("stderr says only what failed, not what to do:\n%s", stderr)
	}
	if j := journals(t, state); len(j) != 0 {
		t.Errorf("a run that never started a turn left sessions: %v", j)
	}
}

func TestPromptPrintsATurnsFailureOnce(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 400, Error: &openaitest.Error{Message: "the prompt is too long for this model", Type: "invalid_request_error"}}
	})
	code, _, stderr := runDshd(t, nil, promptArgs(t, srv, "hi")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "the prompt is too long for this model"); n != 1 {
		t.Errorf("the failure is printed %d times, want once:\n%s", n, stderr)
	}
}

func TestPromptShowsAFailedToolsReason(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "edit_file", Arguments: `{"path":"main.go","old_text":"func nope()","new_text":"func yes()"}`}}},
		openaitest.Text("I could not edit it."),
	)
	cwd := t.TempDir()
	testkit.Write(t, cwd, "main.go", "package main\n")
	code, _, stderr := runDshd(t, nil, "prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--mode", "yolo",
		"--state-dir", t.TempDir(), "--cwd", cwd, "edit it")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var line string
	for l := range strings.Lines(stderr) {
		if strings.HasPrefix(l, "✗ ") {
			line = strings.TrimSpace(l)
		}
	}
	if !strings.HasPrefix(line, "✗ Edit main.go: ") || !strings.Contains(line, "not found") {
		t.Fatalf("the failed tool's line is %q, want its title and reason; stderr:\n%s", line, stderr)
	}
}

func TestTheModelTimeoutEndsAWaitForAServerThatSendsNothing(t *testing.T) {
	never := make(chan struct{})
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
	}{
		{"no response headers", openaitest.Reply{Hold: never, HoldHeaders: true}},
		{"headers, then not a byte", openaitest.Reply{Hold: never}},
	} {
		t.Run("prompt: "+tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			srv.Handle(func(*openaitest.Request) openaitest.Reply { return tc.reply })
			code, _, stderr := runDshd(t, nil, promptArgs(t, srv, "--model-timeout", "1s", "hi")...)
			if code != 1 || strings.Count(stderr, "sent nothing for 1s") != 1 {
				t.Fatalf("exit %d, want 1 saying once that the server sent nothing for 1s; stderr:\n%s", code, stderr)
			}
			// stderr is a pipe here: no live line, no terminal controls.
			if strings.ContainsAny(stderr, "\r\x1b") || strings.Contains(stderr, "waiting for") {
				t.Errorf("a live status line was written to a pipe:\n%q", stderr)
			}
		})
	}
	t.Run("serve", func(t *testing.T) {
		ctx := testkit.Context(t)
		srv := fakeModel(t)
		srv.Handle(func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Hold: never, HoldHeaders: true} })
		p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--model-timeout", "1s", "--state-dir", t.TempDir())
		c := stdioWire(p)
		sid := c.openSession(ctx, t.TempDir())
		e := c.callFail(ctx, "session/prompt", promptParams(sid, "hi"))
		if !strings.Contains(e.Message+string(e.Data), "sent nothing for 1s") {
			t.Fatalf("prompt error %v, want the model timeout", e)
		}
		p.hangUp(ctx)
	})
	t.Run("the default is well under five minutes", func(t *testing.T) {
		for _, cmd := range []string{"prompt", "serve"} {
			_, _, help := runDshd(t, nil, cmd, "--help")
			line := ""
			for l := range strings.Lines(help) {
				if strings.Contains(l, "--model-timeout") {
					line = l
				}
			}
			if !strings.Contains(line, "(default 1m)") {
				t.Errorf("%s --help: %q, want --model-timeout with its default of 1m", cmd, line)
			}
		}
	})
}

func TestALongRetryAfterIsReportedNotSlept(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 429, RetryAfter: "90"}
	})
	code, _, stderr := runDshd(t, nil, promptArgs(t, srv, "hi")...)
	if code != 1 || !strings.Contains(stderr, "1m30s") {
		t.Fatalf("exit %d, want 1 saying it would have to wait 1m30s; stderr:\n%s", code, stderr)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Errorf("%d requests, want 1: a wait that long is not made", n)
	}
}

func TestPromptDrawsALiveLineOnATerminalOnly(t *testing.T) {
	srv := fakeModel(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Hold: release, HoldHeaders: true, Text: []string{"done"}}
	})
	ctx := testkit.Context(t)
	tty := startOnTerminal(t, promptArgs(t, srv, "hi")...)
	if err := tty.out.waitText(ctx, "waiting for the model"); err != nil {
		t.Fatalf("%v; terminal:\n%q", err, tty.out)
	}
	once.Do(func() { close(release) })
	if code := tty.wait(ctx); code != 0 {
		t.Fatalf("exit %d; terminal:\n%q", code, tty.out)
	}
	if tty.stdout() != "done\n" {
		t.Errorf("stdout %q, want only the answer", tty.stdout())
	}
	if out := tty.out.String(); !strings.HasSuffix(strings.TrimRight(out, "\r\n"), "\x1b[K") && !strings.Contains(out, "\r\x1b[K") {
		t.Errorf("the live line is never cleared:\n%q", out)
	}
}

// ttyProc is a dshd whose stderr is a terminal.
type ttyProc struct {
	*proc
	out    *lineLog
	outBuf *strings.Builder
	outMu  *sync.Mutex
}

func (p *ttyProc) stdout() string {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return p.outBuf.String()
}

// startOnTerminal starts `dshd args...` with stderr on a pseudo-terminal
// and stdout on a pipe.
func startOnTerminal(t *testing.T, args ...string) *ttyProc {
	t.Helper()
	master, slave := openPTY(t)
	exe := testkit.Executable(t)
	p := &proc{t: t, stderr: newLineLog(), done: make(chan struct{})}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Env = baseEnv(t)
	p.cmd.Stdin = strings.NewReader("")
	p.cmd.Stderr = slave
	var buf strings.Builder
	var mu sync.Mutex
	p.cmd.Stdout = writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(b)
	})
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := newLineLog()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			if n > 0 {
				out.Write(b[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		<-copied
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		master.Close()
	})
	return &ttyProc{proc: p, out: out, outBuf: &buf, outMu: &mu}
}

// waitText waits until the output so far contains s, lines or not.
func (l *lineLog) waitText(ctx context.Context, s string) error {
	for {
		l.mu.Lock()
		found, ch := strings.Contains(l.buf.String(), s), l.changed
		l.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func TestPromptPrintsSetupWarningsOnStderrNeverInTheAnswer(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("The answer."))
	cwd := t.TempDir()
	// A definition file with a key no definition has: the session starts
	// and says so, as a warning outside the conversation.
	if err := os.MkdirAll(filepath.Join(cwd, ".dshd", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, cwd, ".dshd/agents/bad.md", "---\nname: bad\ndescription: x\nmodle: m\n---\nbody\n")
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "",
		"--state-dir", t.TempDir(), "--cwd", cwd, "hi")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if strings.TrimSpace(stdout) != "The answer." {
		t.Errorf("stdout is %q, want only the answer", stdout)
	}
	if !strings.Contains(stderr, "⚠ ") || !strings.Contains(stderr, "bad.md") || !strings.Contains(stderr, "modle") {
		t.Errorf("stderr does not carry the warning naming the file and the key:\n%s", stderr)
	}
}
