package session

import (
	"os"
	"syscall"
)

// datasync flushes a journal's data and size to disk. fdatasync skips the
// inode's timestamps, which a journal does not need, and is cheaper than
// fsync on ext4.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Sync()
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
