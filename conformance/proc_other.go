//go:build !unix

// This file is the fallback for systems without process groups.

package conformance

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func exitStatus(cmd *exec.Cmd) map[string]any {
	st := map[string]any{"exitCode": nil, "signal": nil}
	if ps := cmd.ProcessState; ps != nil {
		st["exitCode"] = ps.ExitCode()
	}
	return st
}
