// This file runs a child agent process on tools/subproc: the tail of its
// stderr, how it ended, and its stdio as the connection to the agent.

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
	"sync"
	"time"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/internal/within"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/subproc"
)

// stderrKept is how much of a child's stderr is kept for diagnostics.
const stderrKept = 2 << 10

// process is a running child agent.
type process struct {
	child *subproc.Child
	// boxed is the child's sandbox command, nil when it runs unconfined;
	// ended waits for it once the child exited (how it ended, its temp
	// dir removed) and says how the child ended.
	boxed *sandbox.Cmd
	ended func() string
	log   *slog.Logger
	// words says where a confined child ran, for the message of its
	// end; nil when it ran unconfined.
	words *boxWords

	tail    tailBuffer
	errDone chan struct{} // the stderr reader ended
}

// startProcess starts t's command in roots[0] (the child's cwd; the
// rest are its additional directories, writable in a workspace-write
// sandbox) with its pipes and its own process group (so a signal reaches
// every helper the agent starts: some agents ignore stdin EOF and leave
// helpers running), tied to this process's life where the system can,
// and in its sandbox when it has one.
func (p *Provider) startProcess(t *target, roots []string) (*process, error) {
	log := p.log.With("agent", t.label)
	box := p.confinementIn(t, roots[0])
	sb, err := p.sandboxFor(box)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", t.command, err)
	}
	var child *subproc.Child
	var boxed *sandbox.Cmd
	if sb == nil {
		cmd := exec.Command(t.command, t.args...)
		cmd.Dir = roots[0]
		cmd.Env = t.environ()
		child, err = subproc.Start(cmd, &subproc.Options{DieWithParent: true, Logger: log})
	} else {
		boxed, err = startBoxed(sb, t, box, roots)
		if err == nil {
			child, err = boxed.StartChild(log)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", t.command, err)
	}
	pr := &process{
		child:   child,
		boxed:   boxed,
		log:     log.With("pid", child.Pid()),
		tail:    tailBuffer{limit: 2 * stderrKept},
		errDone: make(chan struct{}),
	}
	pr.ended = sync.OnceValue(pr.end)
	if boxed != nil && boxed.Confined() {
		pr.words = p.boxWordsOf(t, box, boxed, roots)
	}
	go pr.readStderr()
	pr.log.Debug("agent process started", "command", t.command, "args", t.args, "sandbox", t.box.mode, "confined", boxed != nil && boxed.Confined())
	return pr, nil
}

// startBoxed prepares t's command under sb, confined by box, making its
// writable dirs that do not exist yet. The program is looked up here, in
// dshd's PATH as for an unconfined child, so a missing one is the same
// error at start; a read-only child gets no workspace roots.
func startBoxed(sb *sandbox.Sandbox, t *target, box confinement, roots []string) (*sandbox.Cmd, error) {
	path, err := exec.LookPath(t.command)
	if err != nil {
		return nil, err
	}
	// The agent's own dirs may not exist yet (a first run), and it could
	// not make them where its sandbox forbids writes.
	for _, d := range box.writable {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("its writable directory: %w", err)
		}
	}
	dir := roots[0]
	if box.mode == sandbox.ReadOnly {
		roots = nil
	}
	cmd, err := sb.Command(context.Background(), sandbox.Spec{
		Argv:  append([]string{path}, t.args...),
		Dir:   dir,
		Env:   t.environ(),
		Roots: roots,
	})
	if err != nil {
		return nil, fmt.Errorf("in its sandbox (%s=%s): %w", KeySandbox, box.mode, err)
	}
	return cmd, nil
}

// readStderr keeps the tail of the child's stderr and, at debug level,
// logs it line by line.
func (pr *process) readStderr() {
	defer close(pr.errDone)
	debug := pr.log.Enabled(context.Background(), slog.LevelDebug)
	buf := make([]byte, 4<<10)
	var line []byte
	for {
		n, err := pr.child.Stderr.Read(buf)
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
	within.Closed(pr.errDone, wait)
	return scrubTail(pr.tail.String(), stderrKept)
}

// sandboxNote says where a confined child ran and what its stderr shows
// the sandbox refused it, for the message of its end; "" for a child that
// ran unconfined. Call it after stderrTail, which waits for stderr.
func (pr *process) sandboxNote() string {
	return pr.words.note(pr.tail.String())
}

// exitDescription says how the child ended, or "" while it runs.
func (pr *process) exitDescription() string {
	select {
	case <-pr.child.Exited():
		return pr.ended()
	default:
		return ""
	}
}

// end says how the child, which has exited, ended: the sandbox helper's
// report for a child in a sandbox (the command's own exit, or why the
// helper could not start it), after which its temp dir is gone.
func (pr *process) end() string {
	if pr.boxed == nil {
		return describeExit(pr.child.State())
	}
	st, err := pr.boxed.Wait()
	var se *sandbox.StartError
	switch {
	case errors.As(err, &se):
		return "could not be started in its sandbox: " + se.Msg
	case err != nil:
		return describeExit(pr.child.State()) + pr.words.in()
	case st.Signal != "":
		return "was killed by signal " + st.Signal + pr.words.in()
	}
	return fmt.Sprintf("exited with status %d", st.Code) + pr.words.in()
}

// describeExit says how a process ended, for diagnostics.
func describeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "ended"
	}
	if sig, ok := subproc.ExitSignal(ps); ok {
		return "was killed by signal " + sig
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// stop ends the child and everything in its process group (see
// subproc.Child.StopGraces) and returns when the child was reaped and its
// pipes are closed.
func (pr *process) stop(eofGrace, termGrace time.Duration) {
	pr.child.StopGraces(eofGrace, termGrace)
	// Every writer of stderr is gone unless one left the group.
	if !within.Closed(pr.errDone, termGrace) {
		pr.child.Stderr.Close()
		<-pr.errDone
	}
	pr.child.Stderr.Close()
	pr.child.Stdout.Close()
	// A child that survived SIGKILL (logged) keeps its temp dir.
	pr.exitDescription()
}

// stdioConn is the child's stdin and stdout as one connection; reads are
// checked for garbage. Close closes both ends, which also unblocks a
// pending read.
type stdioConn struct {
	r  *lineCheck
	pr *process
}

func (c *stdioConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *stdioConn) Write(b []byte) (int, error) { return c.pr.child.Stdin.Write(b) }
func (c *stdioConn) Close() error {
	c.pr.child.Stdin.Close()
	c.pr.child.Stdout.Close()
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
	// cut, when set, runs (outside the lock) once, when bytes are first
	// dropped.
	cut     func()
	cutOnce sync.Once
	mu      sync.Mutex
	buf     []byte
	total   int64
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	t.write(p)
	dropped := t.total > int64(len(t.buf))
	t.mu.Unlock()
	if dropped && t.cut != nil {
		t.cutOnce.Do(t.cut)
	}
}

func (t *tailBuffer) write(p []byte) {
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

// Replace makes s the kept bytes (its tail, when longer than the limit);
// truncated says whether s itself lost bytes before it.
func (t *tailBuffer) Replace(s string, truncated bool) {
	t.mu.Lock()
	if len(s) > t.limit {
		s, truncated = s[len(s)-t.limit:], true
	}
	t.buf = append(t.buf[:0], s...)
	t.total = int64(len(s))
	if truncated {
		t.total++
	}
	t.mu.Unlock()
	if truncated && t.cut != nil {
		t.cutOnce.Do(t.cut)
	}
}

// String returns the kept bytes, starting on a character boundary.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(utf8cut.TrimPartial(t.buf))
}

// Truncated reports whether bytes were dropped.
func (t *tailBuffer) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(len(t.buf))
}
