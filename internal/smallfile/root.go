// This file reads and lists the files of a workspace through the
// workspace as an os.Root, so that none of them leads outside it.

package smallfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// OutsideError is a file of a workspace that leads outside it: its path,
// or a symbolic link on its way (even one swapped in during the open),
// which an open or a stat through the workspace as an os.Root refused.
// It does not name the file, which the caller names.
type OutsideError struct {
	Root string // the workspace's directory
}

func (e *OutsideError) Error() string { return "leads outside the workspace " + e.Root }

// escapeText is what an os.Root says of a name that leads out of it. The
// os package does not export that error (golang/go#74640 proposes it), so
// its text is all that tells it from the others; TestRoot_ALinkOutIsAnOutsideError
// fails if a Go release words it otherwise.
const escapeText = "path escapes from parent"

// Root is a workspace's directory, opened as an os.Root, for reading and
// listing the files a repository holds and dshd reads itself (slash
// command files, agent definitions and the schema files they name) by
// their paths: a path not below the directory, or a symbolic link that
// leads out of it, is an [*OutsideError], and nothing outside is opened
// or stat'ed. A link that stays inside is followed.
type Root struct {
	dir  string
	root *os.Root
}

// OpenRoot opens the workspace directory dir.
func OpenRoot(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{dir: dir, root: r}, nil
}

// Close closes r.
func (r *Root) Close() error { return r.root.Close() }

// name is path relative to r's directory, when it is that directory or
// below it as written.
func (r *Root) name(path string) (string, error) {
	rel, err := filepath.Rel(r.dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", &OutsideError{Root: r.dir}
	}
	return rel, nil
}

// fail is err of an operation on path through r: an [*OutsideError]
// when r refused a name that leads out of it, and otherwise err naming
// path, as the same operation without r would, not the name below r.
func (r *Root) fail(path string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	if pe.Err.Error() == escapeText {
		return &OutsideError{Root: r.dir}
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
}

// Read is [Read] of the file at path, through r.
func (r *Root) Read(path string, b Bound) ([]byte, error) {
	name, err := r.name(path)
	if err != nil {
		return nil, err
	}
	data, err := ReadIn(r.root, name, b)
	if err != nil && !isReadErr(err) {
		err = r.fail(path, err)
	}
	return data, err
}

// isReadErr reports whether err is one of [Read]'s own, which name no
// path.
func isReadErr(err error) bool {
	var nr *NotRegularError
	var tl *TooLargeError
	return errors.As(err, &nr) || errors.As(err, &tl)
}

// Stat is [os.Stat] of path, through r: a link is followed while it
// stays inside.
func (r *Root) Stat(path string) (fs.FileInfo, error) {
	name, err := r.name(path)
	if err != nil {
		return nil, err
	}
	info, err := r.root.Stat(name)
	if err != nil {
		return nil, r.fail(path, err)
	}
	return info, nil
}

// ReadDir is [os.ReadDir] of the directory at path, through r: its
// entries sorted by name. Like os.ReadDir's, its open does not wait for
// a FIFO in the directory's place, which is refused as not a directory.
func (r *Root) ReadDir(path string) ([]fs.DirEntry, error) {
	name, err := r.name(path)
	if err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, r.fail(path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		if err == nil {
			err = syscall.ENOTDIR
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: err}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// ReadBelow reads the file at path, within b, as [Read] does when root is
// "" (the user's own file, whose links are followed wherever they lead),
// and otherwise through the workspace directory root as [Root.Read] does,
// root opened for this one read.
func ReadBelow(root, path string, b Bound) ([]byte, error) {
	if root == "" {
		return Read(path, b)
	}
	r, err := OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Read(path, b)
}
