//go:build unix

package subproc

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/tools/internal/tooltest"
)

// shortGrace keeps escalation tests quick; nothing asserts on it.
const shortGrace = 100 * time.Millisecond

func start(t *testing.T, script string, o *Options) (*Child, *bufio.Reader) {
	t.Helper()
	c, err := Start(exec.Command("/bin/sh", "-c", script), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop(shortGrace)
		c.Stdout.Close()
		c.Stderr.Close()
	})
	return c, bufio.NewReader(c.Stdout)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var line string
	var err error
	tooltest.Within(t, "a line from the child", func() { line, err = r.ReadString('\n') })
	if err != nil {
		t.Fatalf("reading the child's stdout: %v", err)
	}
	return strings.TrimSuffix(line, "\n")
}

// readToEOF returns once every holder of the child's stdout is gone.
func readToEOF(t *testing.T, r io.Reader) {
	t.Helper()
	tooltest.Within(t, "EOF on the child's stdout", func() { _, _ = io.Copy(io.Discard, r) })
}

func TestStart_TheChildTalksOnItsPipesAndEndsOnStdinEOF(t *testing.T) {
	c, out := start(t, "cat; echo bye >&2", nil)
	if _, err := c.Stdin.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, out); got != "hello" {
		t.Fatalf("echoed %q", got)
	}
	if c.State() != nil {
		t.Fatal("a running child has a state")
	}
	tooltest.Within(t, "Stop", func() { c.Stop(tooltest.Watchdog) })
	if err := c.Err(); err != nil || c.State().ExitCode() != 0 {
		t.Fatalf("ended with %v", err)
	}
	if _, signaled := ExitSignal(c.State()); signaled {
		t.Fatal("a child that exited is reported as signalled")
	}
	errOut, _ := io.ReadAll(c.Stderr)
	if string(errOut) != "bye\n" {
		t.Fatalf("stderr = %q", errOut)
	}
	if c.Group().Alive() {
		t.Fatal("the group outlived Stop")
	}
}

func TestStop_EscalatesUntilTheChildEnds(t *testing.T) {
	cases := []struct {
		name, script, signal string
	}{
		{"a child deaf to stdin EOF ends on SIGTERM", `echo ready; exec sleep 1000`, "SIGTERM"},
		{"a child that ignores SIGTERM ends on SIGKILL", `trap "" TERM; echo ready; exec sleep 1000`, "SIGKILL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, out := start(t, tc.script, &Options{NewSession: true})
			readLine(t, out)
			tooltest.Within(t, "Stop", func() { c.Stop(shortGrace) })
			if got, ok := ExitSignal(c.State()); !ok || got != tc.signal {
				t.Fatalf("ended by %q (%v), want %s", got, ok, tc.signal)
			}
			var ee *exec.ExitError
			if !errors.As(c.Err(), &ee) {
				t.Fatalf("Err = %v, want an *exec.ExitError", c.Err())
			}
		})
	}
}

func TestStop_EndsWhatTheLeaderLeftInItsGroup(t *testing.T) {
	// The background sleep keeps stdout open: EOF means it is gone.
	c, out := start(t, `sleep 1000 & echo ready; exec cat`, nil)
	readLine(t, out)
	tooltest.Within(t, "Stop", func() { c.Stop(tooltest.Watchdog) })
	readToEOF(t, out)
	if c.Group().Alive() {
		t.Fatal("the group outlived Stop")
	}
}

func TestKillLeftovers_TheGroupEndsWithItsLeader(t *testing.T) {
	c, out := start(t, `sleep 1000 & echo ready`, &Options{KillLeftovers: true})
	readLine(t, out)
	tooltest.Within(t, "the leader's exit", func() { <-c.Exited() })
	readToEOF(t, out) // the orphaned sleep held stdout until it was killed
	if !c.WaitExit(0) {
		t.Fatal("WaitExit(0) on an exited child is false")
	}
}

func TestDieWithParent_AChildStartsAndStopsLikeAnyOther(t *testing.T) {
	// Whether the child dies with this process is tested where it matters,
	// by killing a re-executed parent (subagents/acp); here: forking from
	// the dedicated thread works, and the thread ends with the last child.
	a, outA := start(t, `echo a; exec cat`, &Options{DieWithParent: true})
	b, outB := start(t, `echo b; exec cat`, &Options{DieWithParent: true})
	if readLine(t, outA) != "a" || readLine(t, outB) != "b" {
		t.Fatal("the children did not start")
	}
	tooltest.Within(t, "Stop", func() {
		a.Stop(tooltest.Watchdog)
		b.Stop(tooltest.Watchdog)
	})
	if a.Err() != nil || b.Err() != nil {
		t.Fatalf("ended with %v, %v", a.Err(), b.Err())
	}
}

func TestStart_AProgramThatCannotStartLeavesNothingBehind(t *testing.T) {
	_, err := Start(exec.Command("/nonexistent/program"), &Options{DieWithParent: true})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Start = %v, want not found", err)
	}
}

func TestLaunch_TheCommandsGroupIsSignalledWholeAndKeepsTheCallersAttributes(t *testing.T) {
	var zero Group
	if zero.Alive() || zero.Signal(Kill) != nil {
		t.Fatal("the zero group is not empty")
	}
	zero.End(time.Hour) // nothing to end: returns at once

	cmd := exec.Command("/bin/sh", "-c", `sleep 1000 & exec sleep 1000`)
	// An attribute of the caller's own survives (the sandbox sets
	// namespaces here).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: true}}
	wait, err := Launch(cmd, &Options{NewSession: true, DieWithParent: true, DeathSignal: Term})
	if err != nil {
		t.Fatal(err)
	}
	if a := cmd.SysProcAttr; !a.Setsid || a.Credential == nil || deathSignalOf(a) != deathSignalWanted(syscall.SIGTERM) {
		t.Fatalf("SysProcAttr = %+v", a)
	}
	g := GroupOf(cmd)
	if !g.Alive() {
		t.Fatal("a running group is not alive")
	}
	waited := make(chan error, 1)
	go func() { waited <- wait() }()
	tooltest.Within(t, "End", func() { g.End(tooltest.Watchdog) })
	tooltest.Within(t, "the leader's reap", func() { <-waited })
	if g.Alive() {
		t.Fatal("the group outlived End")
	}
	if got, ok := ExitSignal(cmd.ProcessState); !ok || got != "SIGTERM" {
		t.Fatalf("ended by %q, want SIGTERM", got)
	}

	// exec.Cmd.Cancel takes os.ErrProcessDone as "nothing left to stop".
	done := exec.Command("/bin/true")
	wait, err = Launch(done, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if err := GroupOf(done).Signal(Term); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signalling an empty group = %v, want os.ErrProcessDone", err)
	}
}

// deathSignalWanted is the Pdeathsig a DieWithParent child gets here: sig
// on Linux, none elsewhere.
func deathSignalWanted(sig syscall.Signal) syscall.Signal {
	if deathSignalNeedsThread {
		return sig
	}
	return 0
}
