//go:build !unix

// This file is the fallback of the unix specifics elsewhere: there are no
// process groups, so only the child itself is killed.

package subproc

import (
	"os"
	"os/exec"
	"strconv"
)

const deathSignalNeedsThread = false

func prepare(*exec.Cmd, Options) {}

// Signal kills the child itself, whatever sig is: there is no SIGTERM to
// send.
func (g Group) Signal(Signal) error {
	if g.leader == nil {
		return nil
	}
	return g.leader.Kill()
}

// Alive is false: without groups, nothing but the child was started, and
// the child is waited for.
func (g Group) Alive() bool { return false }

// SignalName names a signal by its number: there are no conventional
// names here.
func SignalName(n int) string { return "SIG" + strconv.Itoa(n) }

// ExitSignal is false: a process ends by exiting here.
func ExitSignal(*os.ProcessState) (string, bool) { return "", false }

// awaitExit returns at once: the caller's wait both waits and reaps.
func awaitExit(int) {}
