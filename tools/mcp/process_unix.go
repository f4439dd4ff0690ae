//go:build unix

// This file holds the unix specifics of a stdio server's process: its own
// session and process group, and signals to the whole group.

package mcp

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setOwnGroup starts the command in a new session, hence a new process
// group whose id is its pid, without a controlling terminal: signals to the
// group reach everything the server started, and nothing it runs can open
// /dev/tty and hang on a prompt.
func setOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// signalGroup sends sig to every process of cmd's group. An empty group is
// not an error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// groupAlive reports whether any process of cmd's group still runs.
func groupAlive(cmd *exec.Cmd) bool {
	if cmd.Process == nil || syscall.Kill(-cmd.Process.Pid, 0) != nil {
		return false
	}
	return groupRunning(cmd.Process.Pid)
}
