// This file closes dshd's /proc/PID to processes of its own uid.

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// hideFromOwnUID makes dshd non-dumpable when it runs as root, so that a
// process of its uid without CAP_SYS_PTRACE (a command, an MCP server)
// cannot read its environment (DSHD_TOKEN, the model key), memory map or
// memory through /proc. Not as another user: a non-root dshd's sandbox
// helper starts in a user namespace whose uid map dshd writes into
// /proc/CHILD after the fork, where the child is still dshd's image and,
// were it non-dumpable, owned by root (EACCES); a confined command is
// kept out by Landlock there. Every dshd process does it, the sandbox
// helper too, which holds only its command's environment; an exec resets
// it, so a command is dumpable as usual.
func hideFromOwnUID() {
	if os.Geteuid() == 0 {
		// It fails only for an argument other than 0 or 1.
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
}
