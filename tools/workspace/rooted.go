// This file reaches files of the local disk through the workspace's
// roots: each access opens its root as an os.Root and goes through it, so
// no symlink, even one swapped in while the call runs, leads outside.

package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// locate returns the index of the root that holds the resolved path p and
// p relative to it as os.Root methods take it ("." for the root itself).
func (w *Workspace) locate(p string) (int, string, error) {
	for i, r := range w.roots {
		if rel, ok := within(p, r); ok {
			if rel == "" {
				rel = "."
			}
			return i, rel, nil
		}
	}
	return 0, "", fmt.Errorf("%w: %s", ErrOutside, p)
}

// openRoot opens root i. Roots are opened per access rather than held, so
// an idle session keeps no descriptor open; the root's own path is the
// client's choice and is trusted, what lies below it is not.
func (w *Workspace) openRoot(i int) (*os.Root, error) {
	return os.OpenRoot(w.real[i])
}

// OpenRoot opens the root that holds the resolved path p and returns it
// with p relative to it, slash-separated ("" for the root itself). The
// caller closes the root.
func (w *Workspace) OpenRoot(p string) (*os.Root, string, error) {
	i, rel, err := w.locate(p)
	if err != nil {
		return nil, "", err
	}
	r, err := w.openRoot(i)
	if err != nil {
		return nil, "", err
	}
	if rel == "." {
		rel = ""
	}
	return r, filepath.ToSlash(rel), nil
}

// inRoot runs fn on the root that holds the resolved path p, with p
// relative to it, and closes the root after.
func inRoot[T any](w *Workspace, p string, fn func(r *os.Root, rel string) (T, error)) (T, error) {
	var zero T
	i, rel, err := w.locate(p)
	if err != nil {
		return zero, err
	}
	r, err := w.openRoot(i)
	if err != nil {
		return zero, err
	}
	defer r.Close()
	return fn(r, rel)
}

// Open opens the resolved path p for reading through its root.
func (w *Workspace) Open(p string) (*os.File, error) {
	return inRoot(w, p, func(r *os.Root, rel string) (*os.File, error) { return r.OpenFile(rel, openFlags, 0) })
}

// Stat describes the resolved path p, through its root.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	return inRoot(w, p, (*os.Root).Stat)
}

// OpenDir opens the directory at the resolved path p, through its root,
// as an os.Root of its own: listing it and describing its entries through
// it stays inside that directory. The caller closes it.
func (w *Workspace) OpenDir(p string) (*os.Root, error) {
	return inRoot(w, p, (*os.Root).OpenRoot)
}
