//go:build unix

// This file holds the unix specifics: new groups and sessions, signals to
// a whole group, and the names of the signals that end a process.

package subproc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// prepare adds the group, session and death signal to cmd's SysProcAttr,
// keeping whatever else the caller set there (namespaces, say).
func prepare(cmd *exec.Cmd, o Options) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	attr.Setsid, attr.Setpgid = o.NewSession, !o.NewSession
	if o.DieWithParent {
		setDeathSignal(attr, o.DeathSignal.sys())
	}
}

// sys is the system's signal; the zero Signal is SIGKILL.
func (s Signal) sys() syscall.Signal {
	if s == Term {
		return syscall.SIGTERM
	}
	return syscall.SIGKILL
}

// Signal sends sig to every process of the group. An empty group is
// os.ErrProcessDone, which exec.Cmd.Cancel may return as it is.
func (g Group) Signal(sig Signal) error {
	if g.leader == nil {
		return nil
	}
	err := syscall.Kill(-g.leader.Pid, sig.sys())
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Alive reports whether a process of the group still runs; zombies do not
// count.
func (g Group) Alive() bool {
	if g.leader == nil || syscall.Kill(-g.leader.Pid, 0) != nil {
		return false
	}
	return groupRunning(g.leader.Pid)
}

// ExitSignal returns the conventional name of the signal that ended a
// process ("SIGTERM"), as ACP terminals report it, and false when the
// process exited by itself.
func ExitSignal(ps *os.ProcessState) (string, bool) {
	if ps == nil {
		return "", false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	return SignalName(int(ws.Signal())), true
}

// SignalName returns the conventional name of signal number n
// ("SIGTERM"), or "SIG" and the number for one without a common name.
func SignalName(n int) string {
	sig := syscall.Signal(n)
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
