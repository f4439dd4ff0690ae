// This file confines paths to a session's roots: the cwd and the additional
// directories, with every symlink resolved.

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutside reports a path that resolves outside every root.
var ErrOutside = errors.New("path is outside the workspace")

// maxSymlinks bounds the links followed while resolving one path, as the
// kernel's ELOOP limit does.
const maxSymlinks = 255

// Workspace is a session's ordered root set: its cwd first, then its
// additional directories. Every path a tool touches goes through Resolve,
// which says which file the path reaches; the local disk is then reached
// through the root holding that file, as an os.Root (rooted.go), so the
// file checked is the file used or the access fails. A Workspace is
// immutable and safe for concurrent use.
type Workspace struct {
	cwd   string
	roots []string // as the client named them, cleaned
	real  []string // the same roots with symlinks resolved
}

// New returns the workspace of a session. cwd and every additional
// directory must be absolute. The roots are resolved once, here: a root
// that is itself a symlink (/tmp on some systems) confines to its target.
// A root that does not exist yet is resolved through its deepest existing
// ancestor.
func New(cwd string, additional []string) (*Workspace, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("workspace: cwd must be absolute: %q", cwd)
	}
	w := &Workspace{cwd: filepath.Clean(cwd)}
	for _, d := range append([]string{cwd}, additional...) {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("workspace: additional directories must be absolute: %q", d)
		}
		d = filepath.Clean(d)
		real, err := realPath(d)
		if err != nil {
			return nil, fmt.Errorf("workspace: resolve root %s: %w", d, err)
		}
		w.roots = append(w.roots, d)
		w.real = append(w.real, real)
	}
	return w, nil
}

// Cwd is the session's working directory, the base of relative paths.
func (w *Workspace) Cwd() string { return w.cwd }

// Roots returns the root set, cwd first, as the client named them.
func (w *Workspace) Roots() []string { return append([]string(nil), w.roots...) }

// Resolve turns p (absolute, or relative to Cwd) into a clean absolute
// path with symlinks resolved, and fails with an error wrapping
// [ErrOutside] unless it falls inside a root. For a path that does
// not exist yet, the deepest existing ancestor is resolved and the rest
// appended, so a file about to be created is checked the same way.
//
// The result is expressed under the root as the client named it: with root
// /tmp/proj where /tmp links to /private/tmp, "a/link" resolving to
// /private/tmp/proj/b comes back as /tmp/proj/b. Every symlink below the
// root is resolved, so whatever later opens the result reaches exactly the
// file that was checked, barring a concurrent change to the tree; access
// through the Workspace's methods and [LocalFS] cannot leave the root even
// then.
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.cwd, abs)
	}
	abs = filepath.Clean(abs)
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	for i, root := range w.real {
		if rel, ok := within(real, root); ok {
			if rel == "" {
				return w.roots[i], nil
			}
			return filepath.Join(w.roots[i], rel), nil
		}
	}
	if real != abs {
		return "", fmt.Errorf("%w: %s (resolves to %s)", ErrOutside, p, real)
	}
	return "", fmt.Errorf("%w: %s", ErrOutside, p)
}

// Display returns how a resolved path is shown to the model: relative to
// the cwd when it is inside it, absolute otherwise.
func (w *Workspace) Display(p string) string {
	if rel, ok := within(p, w.cwd); ok {
		if rel == "" {
			return "."
		}
		return rel
	}
	return p
}

// within reports whether p is root or below it, and p relative to root
// ("" for root itself). Both must be clean and absolute.
func within(p, root string) (string, bool) {
	if p == root {
		return "", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(p, prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

// realPath resolves every symlink of the clean absolute path p, one
// component at a time. Once a component does not exist, the rest cannot
// hold symlinks and is appended as it is; a dangling link is followed to
// its target like any other, so it cannot smuggle a write outside.
func realPath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	pending := splitPath(p[len(vol):])
	links := 0
	missing := 0 // trailing components of resolved that do not exist
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			if missing > 0 {
				missing--
			}
			continue
		}
		next := filepath.Join(resolved, c)
		if missing > 0 {
			resolved = next
			missing++
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				resolved = next
				missing++
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("too many levels of symbolic links: %s", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			resolved = tv + string(filepath.Separator)
			target = target[len(tv):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}
