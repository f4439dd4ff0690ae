//go:build unix

package session

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockByte takes a write lock on the byte at off, without waiting: a lock
// someone else holds is errLocked.
func lockByte(f *os.File, off int64) error {
	err := setLock(f, unix.F_WRLCK, off)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errLocked
	}
	return err
}

// unlockByte lets go of the lock on the byte at off.
func unlockByte(f *os.File, off int64) error { return setLock(f, unix.F_UNLCK, off) }

func setLock(f *os.File, typ int16, off int64) error {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: off, Len: 1}
	for {
		err := unix.FcntlFlock(f.Fd(), setLockCmd, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}
