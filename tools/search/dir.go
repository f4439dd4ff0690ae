// This file holds the directory handles of a walk: each directory is
// opened once through the walk's os.Root, its files are opened through
// the handle, and the handle is closed when the last batch of its files
// has been visited.

package search

import (
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/dshd/dshd/internal/smallfile"
)

// Dir is an open directory of a walk.
type Dir struct {
	f    *os.File
	root *os.Root        // the walk's root, for systems without openat
	rel  string          // slash path of the directory below root
	conn syscall.RawConn // f's descriptor, for openat; nil if unavailable
	refs atomic.Int32
}

// openDir opens the directory rel (slash-separated) below root.
func openDir(root *os.Root, rel string) (*Dir, error) {
	f, err := root.Open(osRel(rel))
	if err != nil {
		return nil, err
	}
	d := &Dir{f: f, root: root, rel: rel}
	d.conn, _ = f.SyscallConn()
	d.refs.Store(1)
	return d, nil
}

// release drops one reference; the last closes the directory.
func (d *Dir) release() {
	if d.refs.Add(-1) == 0 {
		d.f.Close()
	}
}

// openListed opens p below root for reading when it is still the file fi,
// a regular file an Lstat of p described; it is how [Dir.Open] opens a
// file where there is no openat. The open does not wait (a FIFO swapped
// in since the Lstat would block it until a writer came) and follows no
// link out of root, and the descriptor's stat must be the same regular
// file: one replaced by a FIFO, a device or a link to another file
// since is refused, unread.
func openListed(root *os.Root, p string, fi fs.FileInfo) (*os.File, error) {
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	f, st, err := smallfile.OpenIn(root, p)
	if err != nil {
		return nil, err
	}
	if !os.SameFile(fi, st) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	return f, nil
}
