//go:build unix

package workspace

import "syscall"

// openFlags open files for reading without blocking on a FIFO swapped in
// for a regular file.
const openFlags = syscall.O_RDONLY | syscall.O_NONBLOCK
