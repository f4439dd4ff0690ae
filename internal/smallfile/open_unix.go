//go:build unix

// This file holds the open flag that keeps an open from waiting, on unix.

package smallfile

import "syscall"

// nonblock makes the open of a FIFO return at once instead of waiting
// for a writer (and a device's open not wait for its carrier); the
// descriptor's stat then refuses it. A regular file's reads ignore it.
const nonblock = syscall.O_NONBLOCK
