//go:build !unix

// This file is the non-unix fallback of the process group helpers: there
// is no group, so signals go to the server process alone.

package mcp

import (
	"os"
	"os/exec"
)

var (
	sigTerm os.Signal = os.Kill // no SIGTERM to send: go straight to kill
	sigKill os.Signal = os.Kill
)

func setOwnGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig os.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Signal(sig)
}

// groupAlive cannot see a group here; the server process was waited for.
func groupAlive(*exec.Cmd) bool { return false }
