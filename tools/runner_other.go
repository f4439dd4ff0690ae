//go:build !unix

// This file is the portable fallback of LocalRunner's process control:
// without process groups, only the main process can be killed.

package tools

import (
	"os"
	"os/exec"
)

type signal int

const (
	sigTerm signal = iota
	sigKill
)

func setOwnGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func groupAlive(*exec.Cmd) bool { return false }

func exitStatus(ps *os.ProcessState, res *CommandResult) {
	if ps == nil {
		return
	}
	code := ps.ExitCode()
	res.ExitCode = &code
}
