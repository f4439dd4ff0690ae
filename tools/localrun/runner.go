// This file implements Runner with os/exec: one process group per command,
// merged output streamed and capped, the whole group killed on timeout or
// cancel.

package tools

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/dshd/dshd/tools/subproc"
)

// Defaults of [RunnerOptions].
const (
	DefaultKillGrace   = 2 * time.Second
	DefaultOutputLimit = 1 << 20
)

// RunnerOptions configures a [LocalRunner]. The zero value is usable.
type RunnerOptions struct {
	// Shell runs Command.Command when Command.Args is empty, as
	// `Shell -c command`. Empty means "/bin/sh".
	Shell string
	// Env is the base environment of every command; nil means the
	// daemon's own (os.Environ). Command.Env entries are appended.
	Env []string
	// KillGrace is how long a process group gets between SIGTERM and
	// SIGKILL. Zero means [DefaultKillGrace].
	KillGrace time.Duration
	// OutputLimit is the byte cap used when Command.OutputLimit is zero.
	// Zero means [DefaultOutputLimit].
	OutputLimit int
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// LocalRunner runs commands on the local machine. Each command gets its own
// session and process group (so it has no controlling terminal to prompt
// on, and a kill reaches everything it started); its stdin is /dev/null and
// its stdout and stderr share one pipe, read while it runs. When the main
// process ends — by itself, by timeout or by cancellation — whatever is
// left of its group is terminated: a command never leaves processes behind
// unless they started a session of their own.
//
// A LocalRunner is safe for concurrent use.
type LocalRunner struct {
	opts RunnerOptions
	log  *slog.Logger
}

var _ Runner = (*LocalRunner)(nil)

// NewLocalRunner returns a LocalRunner; opts may be nil.
func NewLocalRunner(opts *RunnerOptions) *LocalRunner {
	r := &LocalRunner{}
	if opts != nil {
		r.opts = *opts
		r.opts.Env = append([]string(nil), opts.Env...)
		if opts.Env == nil {
			r.opts.Env = nil
		}
	}
	if r.opts.Shell == "" {
		r.opts.Shell = "/bin/sh"
	}
	if r.opts.KillGrace <= 0 {
		r.opts.KillGrace = DefaultKillGrace
	}
	if r.opts.OutputLimit <= 0 {
		r.opts.OutputLimit = DefaultOutputLimit
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// readBuffer is the size of the reads the output pipe is drained with.
const readBuffer = 256 << 10

// Run runs cmd and waits for it. output, when non-nil, receives the merged
// output as it arrives, from one goroutine, in order; a slow callback slows
// the command down rather than dropping output. started is never called:
// a local command has no terminal id.
//
// A command that cannot start (no such program, a bad Dir) is an error. A
// command that runs is a result, whatever its exit status; when Timeout
// expires the result has TimedOut set. When ctx is cancelled the group is
// killed and Run returns the partial result together with ctx.Err().
func (r *LocalRunner) Run(ctx context.Context, c Command, started func(terminalID string), output func(chunk string)) (CommandResult, error) {
	if err := ctx.Err(); err != nil {
		return CommandResult{}, err
	}
	limit := c.OutputLimit
	if limit <= 0 {
		limit = r.opts.OutputLimit
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()

	var cmd *exec.Cmd
	if len(c.Args) > 0 {
		cmd = exec.CommandContext(runCtx, c.Command, c.Args...)
	} else {
		cmd = exec.CommandContext(runCtx, r.opts.Shell, "-c", c.Command)
	}
	cmd.Dir = c.Dir
	base := r.opts.Env
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(append([]string(nil), base...), c.Env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return CommandResult{}, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// A session of its own: no controlling terminal to prompt on, and a
	// group a kill reaches entirely.
	subproc.Prepare(cmd, &subproc.Options{NewSession: true})
	// On timeout or cancel, exec calls Cancel: terminate the whole group,
	// not just the shell, or a grandchild keeps running (and keeps the
	// output pipe open). WaitDelay then bounds the wait for a leader that
	// ignores SIGTERM; the rest of the group is dealt with after Wait.
	cmd.Cancel = func() error { return subproc.GroupOf(cmd).Signal(subproc.Term) }
	cmd.WaitDelay = r.opts.KillGrace

	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return CommandResult{}, err
	}
	pw.Close() // the children hold their copies; EOF comes when they all exit
	r.log.Debug("command started", "pid", cmd.Process.Pid, "command", c.Command, "args", c.Args)

	tail := newTailBuffer(limit)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, readBuffer)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				tail.Write(buf[:n])
				if output != nil {
					output(string(buf[:n]))
				}
			}
			if err != nil {
				return
			}
		}
	}()

	waitErr := cmd.Wait()
	killed := runCtx.Err() != nil
	// The leader is gone; stop whatever it left behind in its group.
	r.reapGroup(cmd, killed)
	// Every writer is dead unless one escaped into its own session; do not
	// let such a process hold the call open.
	select {
	case <-readDone:
	case <-time.After(r.opts.KillGrace):
		pr.Close()
		<-readDone
	}
	pr.Close()

	res := CommandResult{Output: tail.String(), Truncated: tail.Truncated()}
	exitStatus(cmd.ProcessState, &res)
	if waitErr != nil && cmd.ProcessState == nil {
		return res, waitErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if killed && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
	}
	r.log.Debug("command finished", "pid", cmd.Process.Pid, "exit", res.ExitCode, "signal", res.Signal, "timed_out", res.TimedOut)
	return res, nil
}

// reapGroup terminates what is left of cmd's process group once its leader
// has exited: SIGTERM, up to KillGrace for the group to empty, then
// SIGKILL. When the leader was already killed by a timeout or cancel, the
// group had its SIGTERM and grace, so it gets SIGKILL at once.
func (r *LocalRunner) reapGroup(cmd *exec.Cmd, killed bool) {
	g := subproc.GroupOf(cmd)
	if !killed {
		g.End(r.opts.KillGrace)
		return
	}
	if g.Alive() {
		_ = g.Signal(subproc.Kill)
	}
}

// exitStatus fills the exit code or the signal of a finished process.
func exitStatus(ps *os.ProcessState, res *CommandResult) {
	if ps == nil {
		return
	}
	if name, ok := subproc.ExitSignal(ps); ok {
		res.Signal = name
		return
	}
	code := ps.ExitCode()
	res.ExitCode = &code
}
