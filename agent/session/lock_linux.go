package session

import "golang.org/x/sys/unix"

// setLockCmd takes a lock of the open file description (Linux 3.15 and
// later): two stores of one process conflict like two processes, and
// closing another descriptor of the file keeps it.
const setLockCmd = unix.F_OFD_SETLK
