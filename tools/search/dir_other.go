//go:build !linux

// This file opens a walk's files through the walk's os.Root where openat
// is not at hand.

package search

import (
	"io"
	"path"
)

// Open opens the entry name of the directory for reading, through the
// walk's os.Root: a symlink swapped in cannot lead outside the root. A
// file that is no longer regular (replaced by a symlink, a FIFO or a
// device after the listing) is refused without a wait ([openListed]).
func (d *Dir) Open(name string) (io.ReadCloser, error) {
	p := osRel(path.Join(d.rel, name))
	fi, err := d.root.Lstat(p)
	if err != nil {
		return nil, err
	}
	f, err := openListed(d.root, p, fi)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
