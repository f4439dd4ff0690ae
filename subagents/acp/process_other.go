//go:build !unix

// This file is the fallback of the unix specifics elsewhere: no process
// groups, so only the child itself is stopped.

package acpprovider

import (
	"fmt"
	"os"
	"os/exec"
)

var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)

const deathSignalNeedsThread = false

func ownGroup(*exec.Cmd) {}

func signalGroup(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Signal(sig)
}

func groupAlive(int) bool { return false }

func describeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "ended"
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}
