//go:build unix && !linux

package session

import "golang.org/x/sys/unix"

// setLockCmd takes a POSIX record lock, which belongs to the process: a
// second store of the same process does not conflict with the first (the
// store's own map of what it holds covers one store), and closing any
// descriptor of the lock file would drop them all, so nothing but the
// store opens it.
const setLockCmd = unix.F_SETLK
