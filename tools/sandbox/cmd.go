// This file prepares, starts and waits for one command under the helper,
// and reads how it ended from the helper's status pipe.

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/tools/subproc"
)

// Spec is one command to run.
type Spec struct {
	// Argv is the program and its arguments; a program without a slash is
	// looked up in the PATH of Env.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is the command's whole environment.
	Env []string
	// Roots are the session's workspace roots (cwd first, then the
	// additional directories): writable in workspace-write mode.
	Roots []string
}

// Status is how a command ended.
type Status struct {
	// Code is the exit code when Signal is empty.
	Code int
	// Signal names the signal that killed it ("SIGTERM"), if one did.
	Signal string
}

// policy is what the helper is told, as JSON in its first argument.
type policy struct {
	// Confine applies Landlock with the rules below.
	Confine bool `json:"confine,omitempty"`
	// Read are the directories readable (and executable); nil: all.
	Read []string `json:"read,omitempty"`
	// Write are the directories writable, removals and renames included.
	Write []string `json:"write,omitempty"`
	// DevDirs and DevFiles are writable device directories and files,
	// ioctls included.
	DevDirs  []string `json:"devDirs,omitempty"`
	DevFiles []string `json:"devFiles,omitempty"`
	// DenyTCP has Landlock deny every TCP bind and connect.
	DenyTCP bool `json:"denyTCP,omitempty"`
	// ScopeUnix keeps abstract unix sockets outside the sandbox out of
	// reach.
	ScopeUnix bool `json:"scopeUnix,omitempty"`
	// Loopback brings up lo: the helper is in a network namespace of its
	// own.
	Loopback bool `json:"loopback,omitempty"`
	// NoCaps has the helper drop every capability before it starts the
	// command: a confining mode, whatever dshd's uid.
	NoCaps bool `json:"noCaps,omitempty"`
	// Hidden are paths the helper mounts over, in a mount namespace of
	// its own, before it confines itself: an empty read-only tmpfs on a
	// directory, /dev/null on a file.
	Hidden []string `json:"hidden,omitempty"`
	// GraceMs is the time leftovers get between SIGTERM and SIGKILL.
	GraceMs int64 `json:"graceMs,omitempty"`
}

// Cmd is one prepared command. Its embedded exec.Cmd is the helper's (or,
// without a helper, the command's own): the caller sets Stdout and Stderr,
// and may set Cancel and WaitDelay, then calls Start and Wait.
type Cmd struct {
	*exec.Cmd

	s        *Sandbox
	opts     subproc.Options
	confined bool
	dir      string
	roots    []string
	writable []string // existing writable dirs, for Explain
	tmp      string   // the private temp dir, removed by Wait
	status   *os.File // our end of the status pipe; nil without a helper
	statusW  *os.File // the helper's end, closed once it started
	wait     func() error
}

// Command prepares spec to run as the sandbox says, under ctx (which kills
// the command's group when done, through exec's Cancel). It fails with
// ErrRefused when the command must be confined and cannot be.
func (s *Sandbox) Command(ctx context.Context, spec Spec) (*Cmd, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	c := &Cmd{s: s, dir: spec.Dir, roots: spec.Roots, opts: subproc.Options{NewSession: true, DieWithParent: true}}
	direct := func() (*Cmd, error) {
		c.Cmd = exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
		c.Dir, c.Env = spec.Dir, spec.Env
		return c, nil
	}
	if s == nil {
		return direct()
	}
	sup := s.supported()
	why := s.unconfinedReason()
	if why != "" && s.cfg.Fallback == Refuse {
		return nil, s.refusal(why)
	}
	if !sup.helper {
		return direct()
	}
	// Even where Landlock is missing and the fallback runs the command
	// unconfined, dropping capabilities needs no Landlock.
	p := policy{GraceMs: s.cfg.Grace.Milliseconds(), NoCaps: s.confines()}
	env := spec.Env
	c.confined = s.confines() && why == ""
	if c.confined {
		tmp, err := os.MkdirTemp(s.cfg.TempDir, "dshd-cmd-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: temp dir: %w", err)
		}
		c.tmp = tmp
		env = withTemp(env, tmp)
		c.writable = existingDirs(s.writableFor(spec.Roots))
		p.Confine = true
		p.Write = append(slices.Clone(c.writable), tmp)
		p.DevDirs, p.DevFiles = devDirs, devFiles
		if s.reads != nil {
			p.Read = existingDirs(slices.Concat(s.reads, SystemDirs, cleanAll(spec.Roots), s.writes))
			p.Read = append(p.Read, tmp)
		}
		if sup.namespaces {
			p.Hidden = s.hidden
		}
		if s.cfg.NoNetwork {
			p.ScopeUnix = true
			if sup.namespaces {
				p.Loopback = true
			} else {
				p.DenyTCP = true
			}
		}
	}
	enc, err := json.Marshal(&p)
	if err != nil {
		c.removeTemp()
		return nil, err
	}
	args := slices.Concat(s.cfg.Helper[1:], []string{string(enc), "--"}, spec.Argv)
	c.Cmd = exec.CommandContext(ctx, s.cfg.Helper[0], args...)
	c.Dir, c.Env = spec.Dir, env
	if c.status, c.statusW, err = os.Pipe(); err != nil {
		c.removeTemp()
		return nil, err
	}
	c.ExtraFiles = []*os.File{c.statusW}
	if sup.namespaces && setNamespaces(c.Cmd, c.confined, p.Loopback, len(p.Hidden) > 0) {
		// The kernel ends the whole namespace when the helper dies.
		c.opts.DeathSignal = subproc.Kill
	} else {
		// A subreaper must live to end what it started.
		c.opts.DeathSignal = subproc.Term
	}
	// The helper gives leftovers their grace before it exits.
	c.WaitDelay = s.cfg.Grace + time.Second
	return c, nil
}

// withTemp points the temp variables at dir.
func withTemp(env []string, dir string) []string {
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "TMPDIR", "TMP", "TEMP", "TEMPDIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+dir, "TMP="+dir, "TEMP="+dir, "TEMPDIR="+dir)
}

// existingDirs keeps the directories that exist, once each: a rule for a
// missing path, or for a file, would fail the whole sandbox.
func existingDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if slices.Contains(out, d) {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Confined reports whether the command runs confined.
func (c *Cmd) Confined() bool { return c.confined }

// Group is the process group the command runs in.
func (c *Cmd) Group() subproc.Group { return subproc.GroupOf(c.Cmd) }

// Start starts the command.
func (c *Cmd) Start() error {
	wait, err := subproc.Launch(c.Cmd, &c.opts)
	if err = c.started(err); err != nil {
		return err
	}
	c.wait = wait
	return nil
}

// StartChild starts the command as [subproc.Start] does, for a long-lived
// server driven through pipes: Stdin, Stdout and Stderr must be nil and
// become pipes, the child reaps itself on its own goroutine, and what the
// command left in its group is killed once it exited. The caller ends it
// through the child (Stop); Wait, called once it exited, says how it ended
// and removes its temp dir.
func (c *Cmd) StartChild(log *slog.Logger) (*subproc.Child, error) {
	o := c.opts
	o.KillLeftovers, o.Logger = true, log
	child, err := subproc.Start(c.Cmd, &o)
	if err = c.started(err); err != nil {
		return nil, err
	}
	c.wait = func() error {
		<-child.Exited()
		return child.Err()
	}
	return child, nil
}

// started closes the helper's end of the status pipe, which the helper
// holds now, and undoes the preparation when starting failed.
func (c *Cmd) started(err error) error {
	if c.statusW != nil {
		c.statusW.Close()
	}
	if err != nil {
		c.closeStatus()
		c.removeTemp()
	}
	return err
}

// StartError is a command the helper could not start (no such program, a
// sandbox that could not be set up).
type StartError struct{ Msg string }

func (e *StartError) Error() string { return e.Msg }

// Wait waits for the command and everything it left behind, and returns
// how it ended. The error is a *StartError when it never ran, or what
// exec returned when there is no exit status at all.
func (c *Cmd) Wait() (Status, error) {
	waitErr := c.wait()
	defer c.removeTemp()
	line := c.readStatus()
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return Status{Code: 127}, &StartError{Msg: msg}
	}
	if st, ok := parseStatus(line); ok {
		return st, nil
	}
	ps := c.ProcessState
	if ps == nil {
		return Status{}, waitErr
	}
	if name, ok := subproc.ExitSignal(ps); ok {
		return Status{Signal: name}, nil
	}
	return Status{Code: ps.ExitCode()}, nil
}

// readStatus returns the helper's last status line, "" without one.
func (c *Cmd) readStatus() string {
	if c.status == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(c.status, 64<<10))
	c.closeStatus()
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// parseStatus reads "exit N" or "signal N".
func parseStatus(line string) (Status, bool) {
	word, num, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return Status{}, false
	}
	switch word {
	case "exit":
		return Status{Code: n}, true
	case "signal":
		return Status{Signal: subproc.SignalName(n)}, true
	}
	return Status{}, false
}

func (c *Cmd) closeStatus() {
	if c.status != nil {
		c.status.Close()
		c.status = nil
	}
}

func (c *Cmd) removeTemp() {
	if c.tmp != "" {
		if err := os.RemoveAll(c.tmp); err != nil {
			c.s.log.Debug("sandbox: removing a command's temp dir", "dir", c.tmp, "err", err)
		}
		c.tmp = ""
	}
}
