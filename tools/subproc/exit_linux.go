// This file waits for a child's exit without reaping it, so that a process
// being killed never reaps its own children in its last moments.

package subproc

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until process pid has exited, leaving it unreaped.
//
// Why not simply wait(2): a blocking waitid reaps inside the kernel before
// the waiting thread looks at its own pending signals. When this process
// is killed by SIGKILL its threads exit one by one; the thread that forked
// a child with a parent-death signal may exit first, the signal kills the
// child at once, and a thread still blocked in waitid then reaps it before
// dying itself. The child died with us, but whoever inherits our orphans
// (a subreaper watching us) never sees it. Waiting on a pidfd through the
// poller instead leaves the reaping to a later system call, which a thread
// with SIGKILL pending never makes.
//
// Without pidfds (Linux before 5.3) it returns at once and the caller's
// wait does both.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			return false
		}
		// Done once it has exited (SIGCHLD is filled in) or cannot be
		// waited for at all; otherwise wait for the pidfd to be readable.
		return err != nil || info.Signo != 0
	})
}
