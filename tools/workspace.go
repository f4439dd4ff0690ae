// This file confines paths to a session's roots. (Stub: the tools work
// replaces the body; the API below is the contract.)

package tools

import (
	"errors"
	"path/filepath"
)

// ErrOutsideWorkspace reports a path that resolves outside every root.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// Workspace is a session's ordered root set: its cwd first, then its
// additional directories. Every path a tool touches goes through Resolve.
type Workspace struct {
	cwd   string
	roots []string
}

// NewWorkspace returns the workspace of a session. cwd and every additional
// directory must be absolute.
func NewWorkspace(cwd string, additional []string) (*Workspace, error) {
	if !filepath.IsAbs(cwd) {
		return nil, errors.New("workspace: cwd must be absolute")
	}
	w := &Workspace{cwd: filepath.Clean(cwd), roots: []string{filepath.Clean(cwd)}}
	for _, d := range additional {
		if !filepath.IsAbs(d) {
			return nil, errors.New("workspace: additional directories must be absolute")
		}
		w.roots = append(w.roots, filepath.Clean(d))
	}
	return w, nil
}

// Cwd is the session's working directory, the base of relative paths.
func (w *Workspace) Cwd() string { return w.cwd }

// Roots returns the root set, cwd first.
func (w *Workspace) Roots() []string { return append([]string(nil), w.roots...) }

// Resolve turns p (absolute, or relative to Cwd) into a clean absolute
// path with symlinks resolved, and fails with ErrOutsideWorkspace unless it
// falls inside a root.
func (w *Workspace) Resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.cwd, p)
	}
	return filepath.Clean(p), nil
}
