// This file writes files of the local disk so that a write checked (and
// approved) for one path lands there or nowhere: the target directory is
// held open from the check to the write, the write goes through that
// handle, and the handle must still be what the path names.

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// ErrChanged reports a write whose directory is no longer the one the
// path named when the write was prepared (it was moved, or replaced by a
// symlink): nothing was written.
var ErrChanged = errors.New("the directory changed since the write was checked; nothing was written")

// PendingWrite is a write to one file, prepared before it is approved.
// Prepare it, read the current content for the diff, ask, then Commit or
// just Close. It holds a directory descriptor until Close.
type PendingWrite struct {
	l    *LocalFS
	path string
	root int    // index of the root holding path
	base string // the deepest existing directory of path's parents, relative to the root
	// missing are the parent directories still to create below base, in
	// order; none when the parent exists.
	missing []string
	name    string   // the file's name in its directory
	dir     *os.Root // base, held open
	info    fs.FileInfo
}

// PrepareWrite opens the directory the resolved path is to be written in
// (its deepest existing ancestor when directories are missing) and holds
// it until the write is committed or closed.
func (l *LocalFS) PrepareWrite(path string) (*PendingWrite, error) {
	i, rel, err := l.ws.locate(path)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	r, err := l.ws.openRoot(i)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w := &PendingWrite{l: l, path: path, root: i, name: filepath.Base(rel)}
	base := filepath.Dir(rel)
	for {
		d, err := r.OpenRoot(base)
		if err == nil {
			w.dir, w.base = d, base
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || base == "." {
			return nil, err
		}
		w.missing = append([]string{filepath.Base(base)}, w.missing...)
		base = filepath.Dir(base)
	}
	if w.info, err = w.dir.Stat("."); err != nil {
		w.dir.Close()
		return nil, err
	}
	return w, nil
}

// Close releases the directory; it is safe to call more than once.
func (w *PendingWrite) Close() error {
	if w.dir == nil {
		return nil
	}
	err := w.dir.Close()
	w.dir = nil
	return err
}

// ReadTextFile returns the file's current content, read through the held
// directory; a file that does not exist yet is an error matching
// [io/fs.ErrNotExist].
func (w *PendingWrite) ReadTextFile(ctx context.Context) (string, error) {
	if len(w.missing) > 0 {
		return "", &fs.PathError{Op: "open", Path: w.path, Err: fs.ErrNotExist}
	}
	f, err := w.dir.OpenFile(w.name, openFlags, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return w.l.readLines(ctx, f, w.path, 0, 0)
}

// Commit replaces the file's content atomically: it writes a temporary
// file beside it and renames it over the original, keeping the original's
// permission bits (0644 for a new file), all through the held directory.
// Missing parent directories are created. It fails with [ErrChanged] when
// the path no longer leads to the held directory.
func (w *PendingWrite) Commit(ctx context.Context, content string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.dir == nil {
		return fmt.Errorf("%s: write already closed", w.path)
	}
	if err := w.verify(); err != nil {
		return err
	}
	dir := w.dir
	if len(w.missing) > 0 {
		sub := filepath.Join(w.missing...)
		if err := dir.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		d, err := dir.OpenRoot(sub)
		if err != nil {
			return err
		}
		defer d.Close()
		dir = d
	}
	mode := fs.FileMode(0o644)
	switch fi, err := dir.Lstat(w.name); {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s: is a directory", w.path)
	case err == nil && fi.Mode().IsRegular():
		mode = fi.Mode().Perm()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	tmp, tmpName, err := createTemp(dir, w.name, mode)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			dir.Remove(tmpName)
		}
	}()
	if _, err := io.WriteString(tmp, content); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	// Sync before rename: otherwise a crash can leave an empty file where
	// the old content used to be.
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := dir.Rename(tmpName, w.name); err != nil {
		return err
	}
	ok = true
	return nil
}

// verify checks that the directory the path names through its root is
// still the one held, so a write approved for one path cannot land at
// another. Between this check and the rename the write can only reach the
// held directory itself.
func (w *PendingWrite) verify() error {
	r, err := w.l.ws.openRoot(w.root)
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Stat(w.base)
	if err != nil || !os.SameFile(fi, w.info) {
		return fmt.Errorf("%s: %w", filepath.Dir(w.path), ErrChanged)
	}
	return nil
}

// createTemp creates a new file in dir named after name, like
// os.CreateTemp (which has no os.Root form).
func createTemp(dir *os.Root, name string, mode fs.FileMode) (*os.File, string, error) {
	prefix := "." + name + ".tmp-"
	for range 100 {
		tmpName := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := dir.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmpName, err
	}
	return nil, "", fmt.Errorf("%s: cannot create a temporary file beside it", name)
}
