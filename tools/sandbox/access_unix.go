//go:build unix

package sandbox

import "golang.org/x/sys/unix"

// writableByUs reports whether dshd itself may write p (its own
// permissions, not the sandbox's).
func writableByUs(p string) access {
	switch err := unix.Access(p, unix.W_OK); err {
	case nil:
		return yes
	case unix.ENOENT, unix.ENOTDIR:
		return missing
	}
	return no
}
