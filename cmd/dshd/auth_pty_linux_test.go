// `dshd auth` on a real terminal: a pseudo-terminal is dshd's stdin,
// stdout and stderr, as in the terminal an editor opens for terminal auth.

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// ptyProc is `dshd args...` with a pseudo-terminal as its stdin, stdout and
// stderr and as its controlling terminal, as in a terminal window.
type ptyProc struct {
	cmd    *exec.Cmd
	tty    *os.File // our copy of the terminal's end, for its modes
	screen *screen
	exited chan struct{}
	err    error // Wait's, after exited
}

func startOnPty(t *testing.T, env []string, args ...string) *ptyProc {
	t.Helper()
	master, tty := openPTY(t)
	t.Cleanup(func() { master.Close() })
	t.Cleanup(func() { tty.Close() })
	exe := testkit.Executable(t)
	p := &ptyProc{cmd: exec.Command(exe, args...), tty: tty, exited: make(chan struct{})}
	p.cmd.Env = baseEnv(t, env...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, tty, tty
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	p.screen = readScreen(master)
	return p
}

// typeKeys writes to the terminal as the user's keyboard would.
func (p *ptyProc) typeKeys(t *testing.T, keys string) {
	t.Helper()
	// The master end is the screen's reader's; writing to it is safe.
	if _, err := p.screen.master.WriteString(keys); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *ptyProc) wait(ctx context.Context, t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-ctx.Done():
		t.Fatalf("dshd auth did not exit; screen:\n%s", p.screen)
	}
	return exitCode(t, "dshd auth", p.err)
}

// screen is everything the terminal showed, kept as a lineLog so that a
// test can wait for a text with waitText.
type screen struct {
	master *os.File
	*lineLog
}

func readScreen(r *os.File) *screen {
	s := &screen{master: r, lineLog: newLineLog()}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.Write(b[:n])
			if err != nil {
				// EIO once the terminal's other end is closed.
				return
			}
		}
	}()
	return s
}

// authOnPty runs `dshd auth` against srv on a terminal, types keys once
// the screen shows prompt, and fails unless it exits with wantCode.
func authOnPty(ctx context.Context, t *testing.T, srv *openaitest.Server, env []string, prompt, keys string, wantCode int) *ptyProc {
	t.Helper()
	p := startOnPty(t, env, deepSeekAt(srv, "auth")...)
	if err := p.screen.waitText(ctx, prompt); err != nil {
		t.Fatalf("the terminal shows no %q: %v; screen:\n%s", prompt, err, p.screen)
	}
	p.typeKeys(t, keys)
	if code := p.wait(ctx, t); code != wantCode {
		t.Fatalf("dshd auth after typing %q: exit %d, want %d; screen:\n%s", keys, code, wantCode, p.screen)
	}
	return p
}

func TestAuth_OnATerminalTheKeyIsReadWithoutEchoAndStored(t *testing.T) {
	srv := fakeModel(t)
	srv.RequireAPIKey("sk-typed-secret")
	env, keyFile := authHome(t)
	ctx := testkit.Context(t)
	// The prompt shows once echo is off, so the key typed after it is hidden.
	p := authOnPty(ctx, t, srv, env, "Model API key (DEEPSEEK_API_KEY): ", "sk-typed-secret\r", 0)
	if err := p.screen.waitText(ctx, "Stored the key"); err != nil {
		t.Fatalf("the terminal shows no %q: %v; screen:\n%s", "Stored the key", err, p.screen)
	}
	if strings.Contains(p.screen.String(), "sk-typed") {
		t.Fatalf("the key showed on the terminal:\n%s", p.screen)
	}
	checkStored(t, keyFile, "sk-typed-secret")

	// And a new daemon's session sends it.
	srv.Enqueue(openaitest.Text("hello"))
	code, stdout, stderr := runDshd(t, env, deepSeekAt(srv, "prompt", "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")...)
	if code != 0 || stdout != "hello\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if got := chatAuth(srv); len(got) != 1 || got[0] != "Bearer sk-typed-secret" {
		t.Fatalf("Authorization %q, want the typed key", got)
	}
}

func TestAuth_CtrlCOnTheTerminalStoresNothingAndRestoresEcho(t *testing.T) {
	srv := fakeModel(t)
	env, keyFile := authHome(t)
	p := authOnPty(testkit.Context(t), t, srv, env, "Model API key", "sk-half\x03", 1)
	tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 || tio.Lflag&unix.ICANON == 0 {
		t.Fatalf("the terminal was left without echo or line editing (lflag %#o)", tio.Lflag)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Fatalf("a key was stored after Ctrl-C (%v)", err)
	}
}
