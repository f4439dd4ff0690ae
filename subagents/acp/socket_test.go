//go:build unix

package acpprovider_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/subagents"
)

// daemon is a socket agent run by a test.
type daemon struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startDaemon runs cmd until the test ends; ready picks the daemon's
// address out of a line of its output, which is read from out.
func startDaemon(t testing.TB, cmd *exec.Cmd, out func(*exec.Cmd) (io.ReadCloser, error), ready func(line string) (string, bool)) *daemon {
	t.Helper()
	r, err := out(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if a, ok := ready(sc.Text()); ok {
				addr <- a
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(d.kill)
	d.addr = recv(t, addr)
	return d
}

// listenedAddr is startDaemon's ready for a dshd that logs the address
// it listens on.
func listenedAddr(line string) (string, bool) {
	if !strings.Contains(line, "dshd listening") {
		return "", false
	}
	_, rest, _ := strings.Cut(line, "addr=")
	return strings.Fields(rest)[0], true
}

// kill ends the daemon and reaps it.
func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// fakeDaemon runs the fake agent listening on addr (unix:PATH or
// tcp:HOST:PORT).
func fakeDaemon(t *testing.T, addr string, env ...string) *daemon {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{fakeEnv + "=" + modeListen, fakeAddrEnv + "=" + addr}, env...)...)
	return startDaemon(t, cmd, (*exec.Cmd).StdoutPipe, func(line string) (string, bool) {
		return strings.CutPrefix(line, "listening ")
	})
}

func TestSocket_RunsShareOneConnectionAndRedialAfterADrop(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	sock := filepath.Join(t.TempDir(), "agent.sock")
	d := fakeDaemon(t, "unix:"+sock)
	opts := map[string]string{"address": "unix:" + sock}
	count := func(want string) {
		t.Helper()
		if res := ask(t, p, parent, "count", opts); res.Output != want {
			t.Fatalf("count = %q, want %q (%s)", res.Output, want, res.Diagnostic)
		}
	}
	count("conns=1 sessions=1")
	count("conns=1 sessions=2")

	// A run in progress when the connection drops fails with a clear
	// error, and the next run dials again.
	progress := newProgressLog()
	hung := start(t, p, subagents.StartRequest{Prompt: "pid", Parent: parent.Scope, Options: opts, Progress: progress.report})
	progress.waitText(t, "pid=")
	count("conns=1 sessions=4")
	d.kill()
	res := wait(t, hung)
	wantError(t, res, "the connection to the agent at unix:"+sock+" was lost")
	hung.Dispose()
	os.Remove(sock)
	fakeDaemon(t, "unix:"+sock)
	count("conns=1 sessions=1")
}

func TestSocket_ARealDshdDaemonServesRunsOnAUnixSocket(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	sock := filepath.Join(t.TempDir(), "dshd.sock")
	cmd := exec.Command(dshdBin, append(dshdArgs(t, "echo.json"), "--listen", "unix:"+sock)...)
	startDaemon(t, cmd, (*exec.Cmd).StderrPipe, func(line string) (string, bool) {
		return sock, strings.Contains(line, "dshd listening")
	})
	opts := map[string]string{"address": "unix:" + sock}
	for _, prompt := range []string{"first", "second"} {
		if res := ask(t, p, parent, prompt, opts); res.StopReason != subagents.StopCompleted || res.Output != "You said: "+prompt {
			t.Fatalf("result = %+v", res)
		}
	}
}

func TestSocket_TCPDaemonsGetTheirToken(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	d := fakeDaemon(t, "tcp:127.0.0.1:0", fakeTokenEnv+"=sesame")
	t.Run("the right token", func(t *testing.T) {
		if res := ask(t, p, parent, "echo in", map[string]string{"address": d.addr, "token": "sesame"}); res.Output != "echo: in" {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("a token from the environment", func(t *testing.T) {
		t.Setenv("TEST_AGENT_TOKEN", "sesame")
		if res := ask(t, p, parent, "echo env", map[string]string{"address": d.addr, "token-env": "TEST_AGENT_TOKEN"}); res.Output != "echo: env" {
			t.Fatalf("result = %+v", res)
		}
	})
	for _, tc := range []struct{ name, token string }{{"no token", ""}, {"a wrong token", "open"}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]string{"address": d.addr}
			if tc.token != "" {
				opts["token"] = tc.token
			}
			res := ask(t, p, parent, "echo x", opts)
			if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "authentication") && !strings.Contains(res.Diagnostic, "authenticate") {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}
