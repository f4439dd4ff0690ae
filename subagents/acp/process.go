// This file runs a child agent process: forking it from the spawner's
// thread, its pipes, the tail of its stderr, and its teardown.

package acpprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"
)

// stderrKept is how much of a child's stderr is kept for diagnostics.
const stderrKept = 2 << 10

// spawner forks children from one goroutine locked to its own OS thread.
// On Linux a child's parent-death signal fires when the thread that forked
// it exits; Go may end any thread a goroutine locked and left, so children
// are never forked from an arbitrary goroutine. The goroutine (and its
// thread) exists while any child it forked is unreaped, and ends with the
// last one.
type spawner struct {
	mu   sync.Mutex
	live int               // children forked and not yet reaped; guarded by mu
	reqs chan spawnRequest // nil while no spawner goroutine runs; guarded by mu
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// start starts cmd; release must be called once the child was reaped.
func (s *spawner) start(cmd *exec.Cmd) (release func(), err error) {
	if !deathSignalNeedsThread {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return func() {}, nil
	}
	s.mu.Lock()
	if s.live == 0 {
		s.reqs = make(chan spawnRequest)
		go spawnLoop(s.reqs)
	}
	s.live++
	reqs := s.reqs
	s.mu.Unlock()
	r := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	reqs <- r
	if err := <-r.done; err != nil {
		s.release()
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(s.release) }, nil
}

func (s *spawner) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live--
	if s.live == 0 {
		close(s.reqs)
		s.reqs = nil
	}
}

// spawnLoop forks on its own thread. It never unlocks the thread: when the
// loop ends, every child it forked has been reaped, and the thread ends
// with the goroutine.
func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// process is a running child agent.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our end
	stdout *os.File // our end
	stderr *os.File // our end
	log    *slog.Logger

	tail    tailBuffer
	errDone chan struct{} // the stderr reader ended
	exited  chan struct{} // the child was reaped
	state   *os.ProcessState
	release func()

	stopOnce sync.Once
}

// startProcess starts t's command in dir with its pipes and its own
// process group.
func (p *Provider) startProcess(t *target, dir string) (*process, error) {
	cmd := exec.Command(t.command, t.args...)
	cmd.Dir = dir
	cmd.Env = t.environ()
	ownGroup(cmd)
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	release, err := p.spawner.start(cmd)
	// The child holds its own copies of its ends.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("cannot start %s: %w", t.command, err)
	}
	pr := &process{
		cmd: cmd, pid: cmd.Process.Pid,
		stdin: inW, stdout: outR, stderr: errR,
		log:     p.log.With("agent", t.label, "pid", cmd.Process.Pid),
		tail:    tailBuffer{limit: 2 * stderrKept},
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
		release: release,
	}
	go pr.readStderr()
	go pr.wait()
	pr.log.Debug("agent process started", "command", t.command, "args", t.args)
	return pr, nil
}

func (pr *process) wait() {
	_ = pr.cmd.Wait()
	pr.state = pr.cmd.ProcessState
	pr.release()
	close(pr.exited)
}

// readStderr keeps the tail of the child's stderr and, at debug level,
// logs it line by line.
func (pr *process) readStderr() {
	defer close(pr.errDone)
	debug := pr.log.Enabled(context.Background(), slog.LevelDebug)
	buf := make([]byte, 4<<10)
	var line []byte
	for {
		n, err := pr.stderr.Read(buf)
		if n > 0 {
			pr.tail.Write(buf[:n])
			if debug {
				line = append(line, buf[:n]...)
				for {
					i := bytes.IndexByte(line, '\n')
					if i < 0 {
						break
					}
					pr.log.Debug("agent stderr", "line", string(line[:i]))
					line = line[i+1:]
				}
				if len(line) > 4<<10 {
					line = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// stderrTail waits briefly for the child's stderr to end (a crashed child
// has written all it will) and returns its scrubbed tail, or "".
func (pr *process) stderrTail(wait time.Duration) string {
	waitFor(pr.errDone, wait)
	return scrubTail(pr.tail.String(), stderrKept)
}

// exitDescription says how the child ended, or "" while it runs.
func (pr *process) exitDescription() string {
	select {
	case <-pr.exited:
		return describeExit(pr.state)
	default:
		return ""
	}
}

// stop ends the child and everything in its process group: stdin closed,
// then after grace SIGTERM to the group, after grace again SIGKILL; once
// the leader is reaped, whatever is left in its group is ended the same
// way. It returns when the child was reaped and its pipes are closed.
func (pr *process) stop(grace time.Duration) {
	pr.stopOnce.Do(func() {
		pr.stdin.Close()
		if !waitFor(pr.exited, grace) {
			pr.log.Debug("agent did not exit on stdin EOF; terminating its group")
			_ = signalGroup(pr.pid, sigTerm)
			if !waitFor(pr.exited, grace) {
				pr.log.Debug("agent did not exit on SIGTERM; killing its group")
				_ = signalGroup(pr.pid, sigKill)
				if !waitFor(pr.exited, 10*time.Second) {
					pr.log.Error("agent process survives SIGKILL")
				}
			}
		}
		pr.reapGroup(grace)
		// Every writer of stderr is gone unless one left the group.
		if !waitFor(pr.errDone, grace) {
			pr.stderr.Close()
			<-pr.errDone
		}
		pr.stderr.Close()
		pr.stdout.Close()
	})
}

// reapGroup ends what the leader left behind in its group.
func (pr *process) reapGroup(grace time.Duration) {
	if !groupAlive(pr.pid) {
		return
	}
	_ = signalGroup(pr.pid, sigTerm)
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for groupAlive(pr.pid) && time.Now().Before(deadline) {
		<-tick.C
	}
	if groupAlive(pr.pid) {
		_ = signalGroup(pr.pid, sigKill)
	}
}

// waitFor reports whether ch closed within d.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// stdioConn is the child's stdin and stdout as one connection; reads are
// checked for garbage. Close closes both ends, which also unblocks a
// pending read.
type stdioConn struct {
	r  *lineCheck
	pr *process
}

func (c *stdioConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *stdioConn) Write(b []byte) (int, error) { return c.pr.stdin.Write(b) }
func (c *stdioConn) Close() error {
	c.pr.stdin.Close()
	c.pr.stdout.Close()
	return nil
}

// errGarbage is the read error of a child that wrote something other than
// JSON-RPC to stdout.
var errGarbage = errors.New("not ACP")

// lineCheck passes a connection's input through, failing the read as soon
// as a line starts with anything but a JSON object: an agent that prints
// logs or banners on stdout is broken, and its run ends with the line in
// the diagnostic instead of hanging on parse errors.
type lineCheck struct {
	r       io.Reader
	midLine bool

	mu     sync.Mutex
	sample string // the start of the first bad line; guarded by mu
}

func (l *lineCheck) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for i := 0; i < n; i++ {
		c := b[i]
		if l.midLine {
			if c == '\n' {
				l.midLine = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{':
			l.midLine = true
		default:
			end := i + 120
			if j := bytes.IndexByte(b[i:n], '\n'); j >= 0 && i+j < end {
				end = i + j
			}
			l.mu.Lock()
			l.sample = string(bytes.ToValidUTF8(b[i:min(end, n)], []byte("?")))
			l.mu.Unlock()
			return i, errGarbage
		}
	}
	return n, err
}

// garbage returns the start of the first bad line, or "".
func (l *lineCheck) garbage() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sample
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	limit int
	mu    sync.Mutex
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.limit {
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return
	}
	if over := len(t.buf) + len(p) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
}

// String returns the kept bytes, starting on a character boundary.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}

// Truncated reports whether bytes were dropped.
func (t *tailBuffer) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(len(t.buf))
}
