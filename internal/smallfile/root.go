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
// or stat'ed. A link that stays inside is followed, also an absolute one
// (which an os.Root alone refuses) that names a place inside.
type Root struct {
	dir  string
	root *os.Root
}

// maxLinks is how many symbolic links [Root.resolve] follows in one path,
// as Linux's open does (MAXSYMLINKS).
const maxLinks = 40

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
	rel, ok := below(r.dir, path)
	if !ok {
		return "", &OutsideError{Root: r.dir}
	}
	return rel, nil
}

// below is path relative to dir, and whether path is dir or below it as
// written.
func below(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	return rel, err == nil && filepath.IsLocal(rel)
}

// do runs op on path's name below r. When r refused the name as leading
// out of it, the name's links are resolved through r and op runs again on
// the result, which r still confines: a link swapped in meanwhile cannot
// lead out.
func (r *Root) do(path string, op func(name string) error) error {
	name, err := r.name(path)
	if err != nil {
		return err
	}
	err = op(name)
	if escapes(err) {
		if resolved, ok := r.resolve(name); ok {
			err = op(resolved)
		}
	}
	return err
}

// escapes reports whether err is an os.Root's refusal of a name that
// leads out of it.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == escapeText
}

// resolve is name with its symbolic links resolved, each looked at
// through r (nothing outside is), an absolute link taken as the place
// below r's directory it names; ok is false when a link leads out of r,
// or there are more than maxLinks. A part that does not exist ends the
// resolving: the open that follows says so.
func (r *Root) resolve(name string) (string, bool) {
	pending := strings.Split(filepath.ToSlash(name), "/")
	var done []string
	for links := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", false
			}
			done = done[:len(done)-1]
			continue
		}
		p := filepath.Join(append(done, c)...)
		info, err := r.root.Lstat(p)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		target, err := r.root.Readlink(p)
		if links++; err != nil || links > maxLinks {
			return "", false
		}
		if filepath.IsAbs(target) {
			rel, ok := r.inside(target)
			if !ok {
				return "", false
			}
			target, done = rel, nil
		}
		pending = append(strings.Split(filepath.ToSlash(target), "/"), pending...)
	}
	return filepath.Join(done...), true
}

// inside is the absolute path target relative to r's directory, as
// written or with its links resolved, when it is below it.
func (r *Root) inside(target string) (string, bool) {
	if rel, ok := below(r.dir, target); ok {
		return rel, true
	}
	real, err := filepath.EvalSymlinks(r.dir) // the workspace's own path, which is trusted
	if err != nil {
		return "", false
	}
	return below(real, target)
}

// fail is err of an operation on path through r: an [*OutsideError]
// when r refused a name that leads out of it, and otherwise err naming
// path, as the same operation without r would, not the name below r.
func (r *Root) fail(path string, err error) error {
	var pe *fs.PathError
	var oe *OutsideError
	switch {
	case escapes(err):
		return &OutsideError{Root: r.dir}
	case errors.As(err, &oe) || !errors.As(err, &pe):
		return err
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
}

// Read is [Read] of the file at path, through r.
func (r *Root) Read(path string, b Bound) ([]byte, error) {
	var data []byte
	err := r.do(path, func(name string) (err error) {
		data, err = ReadIn(r.root, name, b)
		return err
	})
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
	var info fs.FileInfo
	err := r.do(path, func(name string) (err error) {
		info, err = r.root.Stat(name)
		return err
	})
	if err != nil {
		return nil, r.fail(path, err)
	}
	return info, nil
}

// Dir is a directory of a workspace, opened through it as an os.Root of
// its own, for listing it and stat'ing its entries by name: a listing
// that is taken at every turn then stats an entry with one system call,
// where [Root.Stat] of its path opens every directory on the way.
type Dir struct {
	r    *Root
	path string
	dir  *os.Root
}

// OpenDir opens the directory at path through r. Like os.ReadDir's, its
// open does not wait for a FIFO in the directory's place, which is
// refused as not a directory: the name is opened with a trailing
// separator, which only a directory takes (os.Root.OpenRoot's open has
// neither O_DIRECTORY nor O_NONBLOCK). The caller closes it.
func (r *Root) OpenDir(path string) (*Dir, error) {
	var dir *os.Root
	err := r.do(path, func(name string) (err error) {
		dir, err = r.root.OpenRoot(name + string(filepath.Separator))
		return err
	})
	if err != nil {
		err = r.fail(path, err)
		// Said as os.ReadDir says it: "open <path>: not a directory".
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open"
		}
		return nil, err
	}
	return &Dir{r: r, path: path, dir: dir}, nil
}

// Close closes d.
func (d *Dir) Close() error { return d.dir.Close() }

// Names is the names of d's entries, sorted. They come without their
// types: a directory opened in an os.Root lists its entries with a stat
// of each (os.File.ReadDir), where the names alone are one pass.
func (d *Dir) Names() ([]string, error) {
	f, err := d.dir.Open(".")
	if err == nil {
		defer f.Close()
		var names []string
		if names, err = f.Readdirnames(-1); err == nil {
			slices.Sort(names)
			return names, nil
		}
	}
	return nil, &fs.PathError{Op: "readdir", Path: d.path, Err: err}
}

// Stat is [Root.Stat] of d's entry name: through d, and through the
// workspace only when a link leads out of d (it may still stay inside
// the workspace).
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	info, err := d.dir.Stat(name)
	if escapes(err) {
		return d.r.Stat(filepath.Join(d.path, name))
	}
	if err != nil {
		return nil, d.r.fail(filepath.Join(d.path, name), err)
	}
	return info, nil
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
