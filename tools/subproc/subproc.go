// This file holds the portable part: signals, options, starting a child
// on pipes, its reaper, and the teardown of its group.

package subproc

import (
	"cmp"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/within"
)

// Signal is what a [Group] can be sent, whatever the system calls it.
type Signal int

const (
	// Term asks the group to end (SIGTERM; where there is none, as Kill).
	Term Signal = iota + 1
	// Kill ends the group at once (SIGKILL).
	Kill
)

// killWait bounds the wait for a leader after SIGKILL: only a process
// stuck in the kernel takes longer, and the teardown does not hang on it.
const killWait = 10 * time.Second

// groupPoll is how often End looks at the process table: there is no
// event for another process's group emptying.
const groupPoll = 10 * time.Millisecond

// Options says how a child is set up. The zero value starts it in a new
// process group and nothing more.
type Options struct {
	// NewSession starts the child in a session of its own (setsid), which
	// also gives it its own process group, and no controlling terminal: no
	// process it runs can open /dev/tty and hang on a prompt. Otherwise it
	// only gets its own process group (setpgid).
	NewSession bool
	// DieWithParent has the kernel signal the child when this process
	// dies, even by SIGKILL. Only [Start] and [Launch] honour it, and only
	// on Linux; elsewhere a child outlives a killed parent (Stop still
	// ends it).
	DieWithParent bool
	// DeathSignal is the signal DieWithParent sends; zero means Kill. A
	// child that must clean up after itself (a sandbox helper ending what
	// it started) asks for Term.
	DeathSignal Signal
	// KillLeftovers SIGKILLs the rest of the group as soon as the leader
	// has exited by itself, so nothing it left behind keeps our pipes
	// open. (The group id cannot be handed to a new process while any
	// member lives, so this reaches only the child's own leftovers.)
	KillLeftovers bool
	// Logger receives the teardown's records, with the child's pid added;
	// nil discards them.
	Logger *slog.Logger
}

// Launch starts cmd, whose standard streams the caller has set up, in a
// process group of its own as opts says (nil: the zero Options),
// honouring DieWithParent. The returned wait reaps cmd (it calls
// cmd.Wait, so exec's Cancel and WaitDelay apply) and must be called
// exactly once; the group is [GroupOf](cmd).
func Launch(cmd *exec.Cmd, opts *Options) (wait func() error, err error) {
	o := orZero(opts)
	prepare(cmd, o)
	release, err := startCmd(cmd, o)
	if err != nil {
		return nil, err
	}
	return func() error {
		awaitExit(cmd.Process.Pid)
		err := cmd.Wait()
		release()
		return err
	}, nil
}

// startCmd starts a prepared cmd, from the forking thread when it must die
// with us; release must be called once it was reaped.
func startCmd(cmd *exec.Cmd, o Options) (release func(), err error) {
	if o.DieWithParent && deathSignalNeedsThread {
		return forker.start(cmd)
	}
	return func() {}, cmd.Start()
}

// orZero returns *opts, or the zero Options for nil.
func orZero(opts *Options) Options {
	if opts == nil {
		return Options{}
	}
	return *opts
}

// Group is the process group a started child leads; its id is the
// leader's pid. The zero Group is empty.
type Group struct {
	leader *os.Process
}

// GroupOf returns the group of cmd, which must have been started by
// [Launch] (or [Start]); before cmd starts it is empty.
func GroupOf(cmd *exec.Cmd) Group { return Group{leader: cmd.Process} }

// End stops what is left of the group: SIGTERM, up to grace for it to
// empty, then SIGKILL to whatever still runs. A group that is already
// gone costs one look.
func (g Group) End(grace time.Duration) {
	if !g.Alive() {
		return
	}
	_ = g.Signal(Term)
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for g.Alive() && time.Now().Before(deadline) {
		<-tick.C
	}
	if g.Alive() {
		_ = g.Signal(Kill)
	}
}

// Child is a command started by [Start]: running in its own group, with
// its standard streams on pipes, reaped by its own goroutine.
type Child struct {
	// Stdin, Stdout and Stderr are our ends of the child's pipes. Stop
	// closes Stdin; the caller closes Stdout and Stderr when its readers
	// are done with them, after Stop at the latest.
	Stdin  *os.File
	Stdout *os.File
	Stderr *os.File

	cmd     *exec.Cmd
	group   Group
	log     *slog.Logger
	exited  chan struct{}
	err     error // Wait's; set before exited is closed
	release func()

	stopOnce sync.Once
}

// Start starts cmd, whose Stdin, Stdout and Stderr must be nil, with pipes
// as its standard streams, in a process group of its own as opts says
// (nil: the zero Options). The returned child runs; Stop must be called.
func Start(cmd *exec.Cmd, opts *Options) (_ *Child, err error) {
	o := orZero(opts)
	log := cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	var ours, theirs []*os.File
	// The child's ends belong to the child: ours are closed after Start
	// either way, so a dead child means EOF on our ends.
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
		if err != nil {
			for _, f := range ours {
				f.Close()
			}
		}
	}()
	pipe := func(childReads bool) (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		if childReads {
			ours, theirs = append(ours, w), append(theirs, r)
			return w, r, nil
		}
		ours, theirs = append(ours, r), append(theirs, w)
		return r, w, nil
	}
	c := &Child{cmd: cmd, log: log, exited: make(chan struct{})}
	if c.Stdin, cmd.Stdin, err = pipe(true); err != nil {
		return nil, err
	}
	if c.Stdout, cmd.Stdout, err = pipe(false); err != nil {
		return nil, err
	}
	if c.Stderr, cmd.Stderr, err = pipe(false); err != nil {
		return nil, err
	}
	prepare(cmd, o)
	if c.release, err = startCmd(cmd, o); err != nil {
		return nil, err
	}
	c.group = GroupOf(cmd)
	c.log = log.With("pid", cmd.Process.Pid)
	go c.reap(o.KillLeftovers)
	return c, nil
}

func (c *Child) reap(killLeftovers bool) {
	awaitExit(c.cmd.Process.Pid)
	c.err = c.cmd.Wait()
	if killLeftovers {
		_ = c.group.Signal(Kill)
	}
	c.release()
	close(c.exited)
}

// Pid returns the child's process id, which is also its group's id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Group returns the child's process group.
func (c *Child) Group() Group { return c.group }

// Exited is closed once the child has exited and been reaped.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// WaitExit waits up to d for the child to exit and reports whether it did.
func (c *Child) WaitExit(d time.Duration) bool { return within.Closed(c.exited, d) }

// Err returns what waiting for the child returned (an *exec.ExitError for
// a non-zero exit). It is meaningful once Exited is closed.
func (c *Child) Err() error { return c.err }

// State returns how the child ended, or nil while it runs.
func (c *Child) State() *os.ProcessState {
	select {
	case <-c.exited:
		return c.cmd.ProcessState
	default:
		return nil
	}
}

// Stop is [Child.StopGraces] with one grace for both waits.
func (c *Child) Stop(grace time.Duration) { c.StopGraces(grace, grace) }

// StopGraces ends the child and its group: close its stdin, wait up to
// eofGrace, SIGTERM the group, wait up to termGrace, SIGKILL the group;
// once the leader is reaped, whatever it left in its group gets SIGTERM,
// termGrace and SIGKILL. The two waits differ because a child's own
// teardown on EOF may itself wait out a helper's SIGTERM grace. It is
// idempotent (with [Child.Stop] too) and returns when the child was reaped
// (unless it survives SIGKILL, which is logged) and its group is gone or
// killed.
func (c *Child) StopGraces(eofGrace, termGrace time.Duration) {
	c.stopOnce.Do(func() {
		_ = c.Stdin.Close()
		if !c.WaitExit(eofGrace) {
			c.log.Debug("child did not exit after its stdin closed; sending SIGTERM to its group")
			_ = c.group.Signal(Term)
			if !c.WaitExit(termGrace) {
				c.log.Warn("child ignored SIGTERM; killing its group")
				_ = c.group.Signal(Kill)
				if !c.WaitExit(killWait) {
					c.log.Error("child process survives SIGKILL")
				}
			}
		}
		c.group.End(termGrace)
	})
}
