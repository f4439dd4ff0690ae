//go:build unix

// This file opens files for grep with raw system calls, on unix.

package search

import (
	"io"
	"syscall"
)

// rawFile is a read-only file descriptor used without the os package: an
// *os.File costs a fcntl and a poller registration per open, which on a
// tree of small files is most of the work.
type rawFile int

// openRead opens path for reading. O_NOFOLLOW refuses a file that was
// replaced by a symlink after the walk listed it, so grep cannot be led
// outside the directory it walks.
func openRead(path string) (io.ReadCloser, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathErr{path, err}
		}
		return rawFile(fd), nil
	}
}

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
