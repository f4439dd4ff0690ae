// This file reads a regular file up to a bound.

package smallfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// Bound is the most a kind of file may hold, with the words that name
// the kind, and the setting that sets the bound, in the error of a longer
// one.
type Bound struct {
	// Max is the largest size read, in bytes; more than 0.
	Max int64
	// What names the kind of file: "a command file".
	What string
	// Setting names the setting Max comes from ("--max-command-file-bytes"),
	// so that whoever reads the error knows what to raise; "" says none.
	Setting string
}

// NotRegularError is a file that is not a regular file: a FIFO, a
// device, a socket, a directory. It does not name the file, which the
// caller names.
type NotRegularError struct {
	Mode fs.FileMode // the file's mode, as the descriptor's stat said
}

func (e *NotRegularError) Error() string { return kind(e.Mode) + ", not a regular file" }

// kind names the type of a file that is not regular.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// TooLargeError is a file longer than its bound. It does not name the
// file, which the caller names.
type TooLargeError struct {
	// Size is the file's size as its stat said, or -1 when the file grew
	// past the bound while it was read.
	Size  int64
	Bound Bound
}

func (e *TooLargeError) Error() string {
	size := "more than " + strconv.FormatInt(e.Bound.Max, 10)
	if e.Size > e.Bound.Max {
		size = strconv.FormatInt(e.Size, 10)
	}
	msg := size + " bytes; " + e.Bound.What + " may have at most " + strconv.FormatInt(e.Bound.Max, 10)
	if e.Bound.Setting != "" {
		msg += " (" + e.Bound.Setting + ")"
	}
	return msg
}

// Read reads the regular file at path, at most b.Max bytes. A file that
// is not regular is a [*NotRegularError], and nothing of it is read; a
// longer one is a [*TooLargeError], returned with the b.Max+1 bytes read
// (for a caller that keeps a prefix: the byte after it says whether a
// cut at b.Max splits a character). A symbolic link is followed.
func Read(path string, b Bound) ([]byte, error) {
	f, st, err := regular(os.OpenFile(path, os.O_RDONLY|nonblock, 0))
	if err != nil {
		return nil, err
	}
	return readAll(f, st, b)
}

// ReadIn is [Read] of name below root: the file is opened through the
// root, so neither name nor a symbolic link on its way (even one swapped
// in during the open) leads outside it.
func ReadIn(root *os.Root, name string, b Bound) ([]byte, error) {
	f, st, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	return readAll(f, st, b)
}

// OpenIn opens name below root for reading as [ReadIn] does, without a
// wait and through the root, for a caller that reads the file itself: it
// returns the file, which the caller closes, with its descriptor's stat,
// only when that says a regular file (a [*NotRegularError] otherwise,
// the file closed unread).
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return regular(root.OpenFile(name, os.O_RDONLY|nonblock, 0))
}

// regular is the file an open returned with its descriptor's stat, when
// that says a regular file; otherwise it closes the file.
func regular(f *os.File, err error) (*os.File, fs.FileInfo, error) {
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &NotRegularError{Mode: st.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readAll reads the opened regular file f, whose stat is st, as [Read]
// says, and closes it.
func readAll(f *os.File, st fs.FileInfo, b Bound) ([]byte, error) {
	defer f.Close()
	// The stat's size plus one byte: the read that finds the end.
	data := make([]byte, 0, min(st.Size(), b.Max)+1)
	r := io.LimitReader(f, b.Max+1)
	for {
		if len(data) == cap(data) && int64(len(data)) <= b.Max {
			data = append(data, 0)[:len(data)] // it grew since the stat
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > b.Max {
		size := st.Size()
		if size <= b.Max {
			size = -1
		}
		return data, &TooLargeError{Size: size, Bound: b}
	}
	return data, nil
}
