//go:build unix

// This file holds the unix specifics of a child process: its own process
// group, group signals and exit descriptions.

package acpprovider

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
)

// ownGroup puts cmd in a new process group whose id is its pid, so a
// signal to the group reaches every helper the agent starts (some agents
// ignore stdin EOF and leave helpers running), and arranges for it to die
// with this process where the system can (see setDeathSignal).
func ownGroup(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	cmd.SysProcAttr = attr
}

// signalGroup sends sig to every process of the group led by pid. An
// empty group is not an error.
func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("not a signal: %v", sig)
	}
	err := syscall.Kill(-pid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether a process of the group led by pid is still
// running (zombies, which nobody may ever reap in a container, do not
// count).
func groupAlive(pid int) bool {
	if syscall.Kill(-pid, 0) != nil {
		return false
	}
	return groupRunning(pid)
}

// describeExit says how a process ended, for diagnostics.
func describeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "ended"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %s", signalName(ws.Signal()))
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGBUS:
		return "SIGBUS"
	}
	return fmt.Sprintf("%d", int(sig))
}
