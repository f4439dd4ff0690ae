package session

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockByte takes an exclusive lock on the byte at off, without waiting:
// a lock another handle holds is errLocked.
func lockByte(f *os.File, off int64) error {
	ol := overlappedAt(off)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	return err
}

// unlockByte lets go of the lock on the byte at off.
func unlockByte(f *os.File, off int64) error {
	ol := overlappedAt(off)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// overlappedAt says where a lock starts.
func overlappedAt(off int64) windows.Overlapped {
	return windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
}
