// This file runs a stdio MCP server: its stderr reader and tail, and how
// it ended. tools/subproc owns its process group, pipes, reaper and the
// polite-then-firm teardown.

package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/tools/subproc"
)

// stderrTailBytes is how much of a server's stderr is kept to explain a
// failed start.
const stderrTailBytes = 2048

// maxStderrLine caps one logged stderr line.
const maxStderrLine = 4096

// process is a running stdio server. Its stdin and stdout are ours through
// pipes the SDK's connection reads and writes; its stderr goes to the log.
type process struct {
	cmd   *exec.Cmd
	child *subproc.Child
	grace time.Duration
	log   *slog.Logger
	red   *redactor

	stderrDone chan struct{} // closed when the stderr reader ended

	tailMu sync.Mutex
	tail   []byte // last stderrTailBytes of stderr; guarded by tailMu
}

// startProcess starts cfg's command in dir with env, in its own session
// and process group: signals to the group reach everything the server
// started, and nothing it runs can open /dev/tty and hang on a prompt. A
// server that exits leaves nothing of its group behind. The returned
// process is running; stop must be called.
func startProcess(cfg *ServerConfig, dir string, env []string, grace time.Duration, log *slog.Logger, red *redactor) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = dir
	cmd.Env = env
	child, err := subproc.Start(cmd, &subproc.Options{NewSession: true, KillLeftovers: true, Logger: log})
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, child: child, grace: grace, log: log, red: red, stderrDone: make(chan struct{})}
	go p.readStderr()
	return p, nil
}

// readStderr logs each stderr line and keeps the tail. It ends at EOF
// (every holder of the pipe is gone) or when stop closes our end.
func (p *process) readStderr() {
	defer close(p.stderrDone)
	r := bufio.NewReaderSize(p.child.Stderr, maxStderrLine)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			p.keepTail(line)
			text := strings.TrimRight(string(line), "\r\n")
			if text != "" {
				p.log.Debug("mcp server stderr", "line", p.red.scrub(text))
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (p *process) keepTail(b []byte) {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	p.tail = append(p.tail, b...)
	if over := len(p.tail) - stderrTailBytes; over > 0 {
		p.tail = append(p.tail[:0], p.tail[over:]...)
	}
}

// stderrTail returns the last stderr lines, trimmed and scrubbed, for a
// failure message. Once the process exited it first gives the reader the
// grace to drain what the process wrote last.
func (p *process) stderrTail() string {
	select {
	case <-p.child.Exited():
		t := time.NewTimer(p.grace)
		select {
		case <-p.stderrDone:
		case <-t.C:
		}
		t.Stop()
	default:
	}
	p.tailMu.Lock()
	t := strings.TrimSpace(strings.ToValidUTF8(string(p.tail), "?"))
	p.tailMu.Unlock()
	return p.red.scrub(t)
}

// exitReason describes how the process ended, or "" while it runs.
func (p *process) exitReason() string {
	select {
	case <-p.child.Exited():
	default:
		return ""
	}
	err := p.child.Err()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String() // "exit status 3", "signal: killed"
	}
	return err.Error()
}

// waitExit waits up to d for the process to exit and reports whether it did.
func (p *process) waitExit(d time.Duration) bool { return p.child.WaitExit(d) }

// stop ends the server the way the MCP spec asks: close its stdin, wait,
// SIGTERM its group, wait, SIGKILL its group; then reap it and stop the
// stderr reader. The SDK connection normally closed stdin already. stop is
// idempotent and returns only when the process is reaped.
func (p *process) stop() {
	p.child.Stop(p.grace)
	_ = p.child.Stdout.Close()
	// A process that escaped the group (setsid) may still hold stderr;
	// closing our end ends the reader regardless.
	_ = p.child.Stderr.Close()
	<-p.stderrDone
}

// conn returns the pipes as the SDK's transport wants them. Closing them
// (the SDK does on session close) closes our ends only.
func (p *process) conn() (io.ReadCloser, io.WriteCloser) {
	return p.child.Stdout, p.child.Stdin
}

// describe explains a start that failed on p: the exit status
// and stderr tail when the process died, err otherwise.
func (p *process) describe(err error) string {
	if p.waitExit(p.grace) {
		msg := p.exitReason()
		if tail := p.stderrTail(); tail != "" {
			msg += fmt.Sprintf("; stderr: %s", lastLines(tail, 5))
		}
		return msg
	}
	return err.Error()
}

// lastLines returns the last n lines of s, joined by " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}
