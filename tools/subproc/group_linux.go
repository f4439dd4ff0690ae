// This file holds the Linux specifics: the parent-death signal and telling
// a running group from one that only has zombies left (from /proc, see
// proc_linux.go).

package subproc

import "syscall"

// setDeathSignal asks the kernel to send sig to the child when its parent
// dies, even by SIGKILL. The kernel fires it when the OS thread that forked
// the child exits, not the process: such children are therefore forked
// only by the spawner's goroutine (see spawner).
func setDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }

// deathSignalNeedsThread is true where setDeathSignal ties the child to
// the forking thread.
const deathSignalNeedsThread = true

// groupRunning reports whether a process of group pgid is running, not
// merely a zombie. kill(-pgid, 0) alone cannot tell: where pid 1 does not
// reap orphans, a dead grandchild stays a zombie forever.
func groupRunning(pgid int) bool {
	all, err := procs()
	if err != nil {
		return true
	}
	for _, p := range all {
		if p.pgrp == pgid && p.state != 'Z' && p.state != 'X' {
			return true
		}
	}
	return false
}
