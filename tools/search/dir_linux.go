// This file opens a walk's files relative to their directory's descriptor
// with raw system calls, on Linux.

package search

import (
	"io"
	"syscall"
)

// Open opens the entry name of the directory for reading. It never follows
// a symlink (a file replaced by one after the listing is refused), and name
// is one path element, so it cannot leave the directory. The file is a raw
// descriptor: an *os.File costs a fcntl and a poller registration per
// open, which on a tree of small files is most of the work.
func (d *Dir) Open(name string) (io.ReadCloser, error) {
	if d.conn == nil {
		return nil, &pathErr{joinRel(d.rel, name), syscall.EBADF}
	}
	fd := -1
	var oerr error
	err := d.conn.Control(func(dirfd uintptr) {
		for {
			fd, oerr = syscall.Openat(int(dirfd), name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			if oerr != syscall.EINTR {
				return
			}
		}
	})
	if err == nil {
		err = oerr
	}
	if err != nil {
		return nil, &pathErr{joinRel(d.rel, name), err}
	}
	return rawFile(fd), nil
}

// rawFile is a read-only file descriptor used without the os package.
type rawFile int

func (f rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Close() error { return syscall.Close(int(f)) }

type pathErr struct {
	path string
	err  error
}

func (e *pathErr) Error() string { return "open " + e.path + ": " + e.err.Error() }
func (e *pathErr) Unwrap() error { return e.err }
