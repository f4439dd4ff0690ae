// This file runs a stdio MCP server: its stderr reader and tail, and how
// it ended. tools/sandbox confines it and ties it to dshd's lifetime;
// tools/subproc owns its process group, pipes, reaper and the
// polite-then-firm teardown.

package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/within"
	"github.com/dshd/dshd/tools/sandbox"
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
	cmd   *sandbox.Cmd
	child *subproc.Child
	grace time.Duration
	log   *slog.Logger
	red   *redactor
	// where says in which sandbox the server runs, for a failure
	// message; "" when it runs unconfined. unconfine is the setting that
	// would run it unconfined, for the same message (sandboxHint).
	where, unconfine string

	stderrDone chan struct{} // closed when the stderr reader ended

	tailMu sync.Mutex
	tail   []byte // last stderrTailBytes of stderr; guarded by tailMu

	// ended is how the server ended (the sandbox's Wait), once it exited.
	ended func() (sandbox.Status, error)
}

// startProcess starts cfg's command in dir with env under sb (nil: directly,
// unconfined), in its own session and process group: signals to the group
// reach everything the server started, and nothing it runs can open
// /dev/tty and hang on a prompt. A server that exits leaves nothing of its
// group behind, and the server dies with dshd (under the sandbox's helper,
// with everything it started). roots are the workspace roots the sandbox
// lets it write; unconfine is the setting that runs servers unconfined,
// for its failure message. The returned process is running; stop must be called. It
// fails with sandbox.ErrRefused when sb cannot confine it and must.
func startProcess(cfg *ServerConfig, dir string, roots, env []string, sb *sandbox.Sandbox, unconfine string, grace time.Duration, log *slog.Logger, red *redactor) (*process, error) {
	// The server outlives the connect call; it is ended by stop, never by
	// a context.
	cmd, err := sb.Command(context.Background(), sandbox.Spec{
		Argv:  append([]string{cfg.Command}, cfg.Args...),
		Dir:   dir,
		Env:   env,
		Roots: roots,
	})
	if err != nil {
		return nil, err
	}
	child, err := cmd.StartChild(log)
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, child: child, grace: grace, log: log, red: red, unconfine: unconfine, stderrDone: make(chan struct{})}
	p.ended = sync.OnceValues(cmd.Wait)
	if cmd.Confined() {
		p.where, _ = sb.Describe(roots)
	}
	log.Debug("mcp server started", "pid", child.Pid(), "confined", cmd.Confined())
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
		within.Closed(p.stderrDone, p.grace)
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
	st, err := p.ended()
	var se *sandbox.StartError
	switch {
	case errors.As(err, &se):
		return "could not start: " + se.Msg
	case err != nil && st == (sandbox.Status{}):
		return err.Error()
	case st.Signal != "":
		return "killed by " + st.Signal
	}
	return "exit status " + strconv.Itoa(st.Code)
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
	select {
	case <-p.child.Exited():
		_, _ = p.ended() // removes its temp dir
	default: // it survived SIGKILL (logged); waiting would hang
	}
}

// conn returns the pipes as the SDK's transport wants them. Closing them
// (the SDK does on session close) closes our ends only.
func (p *process) conn() (io.ReadCloser, io.WriteCloser) {
	return p.child.Stdout, p.child.Stdin
}

// describe explains a start that failed on p: the exit status, stderr
// tail and sandbox when the process died, err otherwise.
func (p *process) describe(err error) string {
	if p.waitExit(p.grace) {
		return p.death(5)
	}
	return err.Error()
}

// death says how the exited process ended: its exit status, the last n
// lines of its stderr and, when it ran confined, the sandbox and what it
// refused the server.
func (p *process) death(n int) string {
	msg := p.exitReason()
	tail := p.stderrTail()
	if tail != "" {
		msg += "; stderr: " + lastLines(tail, n)
	}
	if p.where != "" {
		msg += "; it ran in the " + p.where
		if note := p.cmd.Explain(tail); note != "" {
			msg += ". " + p.red.scrub(note) + " " + sandboxHint(p.unconfine)
		}
	}
	return msg
}

// sandboxHint says which setting (Settings.Sandbox) runs stdio servers
// outside the commands' sandbox.
func sandboxHint(setting string) string {
	return "To run MCP servers unconfined, set " + setting + " off."
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
