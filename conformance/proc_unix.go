//go:build unix

// This file puts agent processes in their own process group, so a case
// can end an agent together with everything it started.

package conformance

import (
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

func exitStatus(cmd *exec.Cmd) map[string]any {
	st := map[string]any{"exitCode": nil, "signal": nil}
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st["signal"] = ws.Signal().String()
		} else {
			st["exitCode"] = ps.ExitCode()
		}
	}
	return st
}
