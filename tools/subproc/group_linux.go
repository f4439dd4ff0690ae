// This file holds the Linux specifics: the parent-death signal and telling
// a running group from one that only has zombies left.

package subproc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

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
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
