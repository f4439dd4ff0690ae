//go:build unix

// This file holds the unix specifics of LocalRunner: sessions, process
// groups, group signals and wait statuses.

package tools

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setOwnGroup puts the command in a new session, hence a new process group
// whose id is its pid, and without a controlling terminal: nothing it runs
// can open /dev/tty to ask for a password and hang the call.
func setOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// signalGroup sends sig to every process of cmd's group. A group that is
// already empty is not an error.
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

// groupAlive reports whether any process of cmd's group is still running.
func groupAlive(cmd *exec.Cmd) bool {
	if cmd.Process == nil || syscall.Kill(-cmd.Process.Pid, 0) != nil {
		return false
	}
	return groupRunning(cmd.Process.Pid)
}

// exitStatus fills the exit code or the signal of a finished process.
func exitStatus(ps *os.ProcessState, res *CommandResult) {
	if ps == nil {
		return
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		res.Signal = signalName(ws.Signal())
		return
	}
	code := ps.ExitCode()
	res.ExitCode = &code
}

// signalName returns the conventional name of sig ("SIGTERM"), as ACP
// terminals report it.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGTRAP:
		return "SIGTRAP"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGALRM:
		return "SIGALRM"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGXCPU:
		return "SIGXCPU"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	}
	return "SIG" + strconv.Itoa(int(sig))
}
