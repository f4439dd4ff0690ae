//go:build !linux

// This file opens a walk's files through the walk's os.Root where openat
// is not at hand.

package search

import (
	"io"
	"io/fs"
	"path"
)

// Open opens the entry name of the directory for reading, through the
// walk's os.Root: a symlink swapped in cannot lead outside the root. A
// file that is no longer regular (replaced by a symlink or a FIFO after
// the listing) is refused.
func (d *Dir) Open(name string) (io.ReadCloser, error) {
	p := osRel(path.Join(d.rel, name))
	fi, err := d.root.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	return d.root.Open(p)
}
