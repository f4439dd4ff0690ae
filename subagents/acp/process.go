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
	"github.com/dshd/dshd/tools/subproc"
)

// stderrKept is how much of a child's stderr is kept for diagnostics.
const stderrKept = 2 << 10

// process is a running child agent.
type process struct {
	child *subproc.Child
	log   *slog.Logger

	tail    tailBuffer
	errDone chan struct{} // the stderr reader ended
}

// startProcess starts t's command in dir with its pipes and its own
// process group (so a signal reaches every helper the agent starts: some
// agents ignore stdin EOF and leave helpers running), tied to this
// process's life where the system can.
func (p *Provider) startProcess(t *target, dir string) (*process, error) {
	cmd := exec.Command(t.command, t.args...)
	cmd.Dir = dir
	cmd.Env = t.environ()
	log := p.log.With("agent", t.label)
	child, err := subproc.Start(cmd, &subproc.Options{DieWithParent: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", t.command, err)
	}
	pr := &process{
		child:   child,
		log:     log.With("pid", child.Pid()),
		tail:    tailBuffer{limit: 2 * stderrKept},
		errDone: make(chan struct{}),
	}
	go pr.readStderr()
	pr.log.Debug("agent process started", "command", t.command, "args", t.args)
	return pr, nil
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
	waitFor(pr.errDone, wait)
	return scrubTail(pr.tail.String(), stderrKept)
}

// exitDescription says how the child ended, or "" while it runs.
func (pr *process) exitDescription() string {
	select {
	case <-pr.child.Exited():
		return describeExit(pr.child.State())
	default:
		return ""
	}
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
	if !waitFor(pr.errDone, termGrace) {
		pr.child.Stderr.Close()
		<-pr.errDone
	}
	pr.child.Stderr.Close()
	pr.child.Stdout.Close()
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

// Replace makes s the kept bytes (its tail, when longer than the limit);
// truncated says whether s itself lost bytes before it.
func (t *tailBuffer) Replace(s string, truncated bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s) > t.limit {
		s, truncated = s[len(s)-t.limit:], true
	}
	t.buf = append(t.buf[:0], s...)
	t.total = int64(len(s))
	if truncated {
		t.total++
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
