// This file implements tools.Runner on the local machine: each command under
// the sandbox's helper in a session of its own, merged output streamed and
// capped, the whole group killed on timeout or cancel.

package localrun

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/within"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/cmdenv"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/subproc"
)

// Defaults of [Options].
const (
	DefaultKillGrace   = 2 * time.Second
	DefaultOutputLimit = 1 << 20
)

// Options configures a [Runner]. The zero value is usable.
type Options struct {
	// Shell runs Command.Command when Command.Args is empty, as
	// `Shell -c command`. Empty means "/bin/sh" ("sh" from PATH on
	// Windows, which has no /bin: Git for Windows' or MSYS2's).
	Shell string
	// Env is the base environment of every command; nil means the
	// daemon's own filtered by the zero cmdenv.Policy (no variable whose
	// name looks like a credential's, secret.Name). Command.Env entries
	// are appended.
	Env []string
	// Sandbox confines commands and ties them to dshd's lifetime; nil runs
	// them directly and unconfined (tests, embedders).
	Sandbox *sandbox.Sandbox
	// KillGrace is how long a process group gets between SIGTERM and
	// SIGKILL. Zero means [DefaultKillGrace].
	KillGrace time.Duration
	// OutputLimit is the byte cap used when Command.OutputLimit is zero.
	// Zero means [DefaultOutputLimit].
	OutputLimit int
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// Runner runs commands on the local machine. Each command gets its own
// session and process group (so it has no controlling terminal to prompt
// on, and a kill reaches everything it started) and runs as its sandbox
// says; its stdin is /dev/null and its stdout and stderr share one pipe,
// read while it runs. When the main process ends — by itself, by timeout
// or by cancellation — whatever it left running is terminated.
//
// A Runner is safe for concurrent use.
type Runner struct {
	opts Options
	log  *slog.Logger
}

var (
	_ tools.Runner           = (*Runner)(nil)
	_ tools.SandboxDescriber = (*Runner)(nil)
)

// New returns a Runner; opts may be nil.
func New(opts *Options) *Runner {
	r := &Runner{}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Env == nil {
		var p cmdenv.Policy
		r.opts.Env = p.Apply(os.Environ())
	} else {
		r.opts.Env = slices.Clone(r.opts.Env)
	}
	if r.opts.Shell == "" {
		r.opts.Shell = defaultShell
	}
	r.opts.KillGrace = choice.PositiveOr(r.opts.KillGrace, DefaultKillGrace)
	r.opts.OutputLimit = choice.PositiveOr(r.opts.OutputLimit, DefaultOutputLimit)
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// DescribeSandbox says in which sandbox c would run.
func (r *Runner) DescribeSandbox(c tools.Command) (string, error) {
	return r.opts.Sandbox.Describe(c.Roots)
}

// Sandbox returns the sandbox commands run in (nil: none), for other
// processes that must run as commands do (MCP servers).
func (r *Runner) Sandbox() *sandbox.Sandbox { return r.opts.Sandbox }

// readBuffer is the size of the reads the output pipe is drained with.
const readBuffer = 256 << 10

// Run runs cmd and waits for it. output, when non-nil, receives the merged
// output as it arrives, from one goroutine, in order; a slow callback slows
// the command down rather than dropping output. started is never called:
// a local command has no terminal id.
//
// A command that cannot start (no such program, a bad Dir, a sandbox that
// refuses it) is an error. A command that runs is a result, whatever its
// exit status; when the sandbox refused something the command tried, the
// output ends with a note saying what and which setting would allow it.
// When Timeout expires the result has TimedOut set. When ctx is cancelled
// the group is killed and Run returns the partial result together with
// ctx.Err().
func (r *Runner) Run(ctx context.Context, c tools.Command, started func(terminalID string), output func(chunk string)) (tools.CommandResult, error) {
	if err := ctx.Err(); err != nil {
		return tools.CommandResult{}, err
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

	argv := append([]string{c.Command}, c.Args...)
	if len(c.Args) == 0 {
		argv = []string{r.opts.Shell, "-c", c.Command}
	}
	cmd, err := r.opts.Sandbox.Command(runCtx, sandbox.Spec{
		Argv:  argv,
		Dir:   c.Dir,
		Env:   slices.Concat(r.opts.Env, c.Env),
		Roots: c.Roots,
	})
	if err != nil {
		return tools.CommandResult{}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return tools.CommandResult{}, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// On timeout or cancel, exec calls Cancel: terminate the whole group,
	// not just its first process, or a grandchild keeps running (and keeps
	// the output pipe open). WaitDelay then bounds the wait for a leader
	// that ignores SIGTERM; the rest of the group is dealt with after Wait.
	cmd.Cancel = func() error { return cmd.Group().Signal(subproc.Term) }
	cmd.WaitDelay = max(cmd.WaitDelay, r.opts.KillGrace)

	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return tools.CommandResult{}, err
	}
	pw.Close() // the children hold their copies; EOF comes when they all exit
	r.log.Debug("command started", "pid", cmd.Process.Pid, "command", c.Command, "args", c.Args, "confined", cmd.Confined())

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

	st, waitErr := cmd.Wait()
	killed := runCtx.Err() != nil
	// The first process is gone; stop whatever it left behind in its group.
	r.reapGroup(cmd.Group(), killed)
	// Every writer is dead unless one escaped the sandbox's helper; do not
	// let such a process hold the call open.
	if !within.Closed(readDone, r.opts.KillGrace) {
		pr.Close()
		<-readDone
	}
	pr.Close()

	res := tools.CommandResult{Output: tail.String(), Truncated: tail.Truncated()}
	if waitErr != nil {
		return res, waitErr
	}
	if st.Signal != "" {
		res.Signal = st.Signal
	} else {
		code := st.Code
		res.ExitCode = &code
	}
	if note := cmd.Explain(res.Output); note != "" {
		// Streamed too: a terminal's reader sees only the stream.
		note = "\n" + note + "\n"
		if !strings.HasSuffix(res.Output, "\n") {
			note = "\n" + note
		}
		res.Output += note
		if output != nil {
			output(note)
		}
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

// reapGroup terminates what is left of the command's process group once
// its first process has exited: SIGTERM, up to KillGrace for the group to
// empty, then SIGKILL. When the first process was killed by a timeout or
// cancel, the group had its SIGTERM and grace, so it gets SIGKILL at once.
// Under the sandbox's helper the group is already empty: the helper ended
// everything before it exited.
func (r *Runner) reapGroup(g subproc.Group, killed bool) {
	if !killed {
		g.End(r.opts.KillGrace)
		return
	}
	if g.Alive() {
		_ = g.Signal(subproc.Kill)
	}
}
