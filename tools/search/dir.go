// This file holds the directory handles of a walk: each directory is
// opened once through the walk's os.Root, its files are opened through
// the handle, and the handle is closed when the last batch of its files
// has been visited.

package search

import (
	"os"
	"sync/atomic"
	"syscall"
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
