// This file tells a terminal from other files on Linux.

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTTY reports whether f is a terminal: a file that answers the terminal
// ioctl, which /dev/null and other character devices do not.
func isTTY(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	})
	return err == nil && errno == 0
}
