// This file runs a stdio MCP server: its process group, its pipes, the
// reaper, the stderr reader, and the polite-then-firm teardown.

package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
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
	grace time.Duration
	log   *slog.Logger
	red   *redactor

	stdin  *os.File // our write end of its stdin
	stdout *os.File // our read end of its stdout
	stderr *os.File // our read end of its stderr

	kill context.CancelFunc // cancels the CommandContext: SIGKILL to the group

	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // set before exited is closed

	stderrDone chan struct{} // closed when the stderr reader ended

	tailMu sync.Mutex
	tail   []byte // last stderrTailBytes of stderr; guarded by tailMu

	stopOnce sync.Once
}

// startProcess starts cfg's command in dir with env, in its own process
// group. The returned process is running; stop must be called.
func startProcess(cfg *ServerConfig, dir string, env []string, grace time.Duration, log *slog.Logger, red *redactor) (_ *process, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	// The child's ends belong to the child: ours are closed after Start
	// either way, so a dead child means EOF on our ends.
	defer func() {
		inR.Close()
		outW.Close()
		errW.Close()
		if err != nil {
			inW.Close()
			outR.Close()
			errR.Close()
		}
	}()

	// The CommandContext is the last resort: Set.Close cancels it after the
	// polite teardown, and exec then runs Cancel, which kills the group.
	killCtx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, cfg.Command, cfg.Args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = errW
	setOwnGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, sigKill) }
	// Our pipes are *os.File, so exec copies nothing and Wait has nothing to
	// wait for but the process; WaitDelay bounds it anyway.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		kill()
		return nil, err
	}
	p := &process{
		cmd:        cmd,
		grace:      grace,
		log:        log,
		red:        red,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		kill:       kill,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	go p.reap()
	go p.readStderr()
	return p, nil
}

// reap waits for the server to exit, then kills whatever it left behind in
// its group: a server that is gone must not leave orphans holding our
// pipes open. (The group id cannot be handed to a new process while any
// member is alive, so this reaches only the server's own leftovers.)
func (p *process) reap() {
	p.waitErr = p.cmd.Wait()
	_ = signalGroup(p.cmd, sigKill)
	close(p.exited)
}

// readStderr logs each stderr line and keeps the tail. It ends at EOF
// (every holder of the pipe is gone) or when stop closes our end.
func (p *process) readStderr() {
	defer close(p.stderrDone)
	r := bufio.NewReaderSize(p.stderr, maxStderrLine)
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
	case <-p.exited:
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
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return "exited with status 0"
	case errors.As(p.waitErr, &ee):
		return ee.ProcessState.String() // "exit status 3", "signal: killed"
	}
	return p.waitErr.Error()
}

// waitExit waits up to d for the process to exit and reports whether it did.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the server the way the MCP spec asks: close its stdin, wait,
// SIGTERM its group, wait, SIGKILL its group; then reap it and stop the
// stderr reader. The SDK connection normally closed stdin already. stop is
// idempotent and returns only when the process is reaped.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		if !p.waitExit(p.grace) {
			p.log.Debug("mcp server did not exit after stdin closed; sending SIGTERM")
			_ = signalGroup(p.cmd, sigTerm)
			if !p.waitExit(p.grace) {
				p.log.Warn("mcp server ignored SIGTERM; killing its process group")
				p.kill() // exec's Cancel: SIGKILL to the group
				<-p.exited
			}
		}
		p.kill()
		// The reaper SIGKILLed the rest of the group; a kill is delivered
		// asynchronously, so wait (within the grace) until none runs.
		p.awaitGroupGone(p.grace)
		_ = p.stdout.Close()
		// A process that escaped the group (setsid) may still hold stderr;
		// closing our end ends the reader regardless.
		_ = p.stderr.Close()
		<-p.stderrDone
	})
}

// groupPoll is how often awaitGroupGone looks at the process table.
const groupPoll = 5 * time.Millisecond

// awaitGroupGone waits up to d for every process of the group to be gone.
// There is no event for another process's group emptying, so it polls; a
// group that is already empty (the usual case) costs one look.
func (p *process) awaitGroupGone(d time.Duration) {
	deadline := time.Now().Add(d)
	for groupAlive(p.cmd) {
		if time.Now().After(deadline) {
			p.log.Warn("mcp server left processes that survive SIGKILL")
			return
		}
		_ = signalGroup(p.cmd, sigKill)
		time.Sleep(groupPoll)
	}
}

// conn returns the pipes as the SDK's transport wants them. Closing them
// (the SDK does on session close) closes our ends only.
func (p *process) conn() (io.ReadCloser, io.WriteCloser) {
	return p.stdout, p.stdin
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
