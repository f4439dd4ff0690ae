// This file reads a listed file with raw system calls, on Linux.

package mdfiles

import (
	"io/fs"
	"slices"
	"syscall"
)

// Read returns what the file st was taken of holds now (all of it, should
// it have grown since); the caller bounds st.Size first. The file is
// opened without blocking, so a FIFO swapped in after the listing reads
// as empty instead of waiting for a writer. On Linux it is read through a
// raw descriptor: an *os.File costs two fcntl calls, a poller
// registration and a stat per open, more than the read of a small file
// (35 → 13 µs a file on a 2-core VM).
func Read(st Stamp) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(st.Path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: st.Path, Err: err}
	}
	defer syscall.Close(fd)
	data := make([]byte, 0, st.Size+1) // one byte more: the read that finds the end
	for {
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: st.Path, Err: err}
		case n == 0:
			return data, nil
		}
		data = data[:len(data)+n]
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data)) // it grew since the stamp
		}
	}
}
