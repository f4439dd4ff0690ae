// This file keeps the workspaces a store holds for its sessions: the
// checkout a session/new asked for (acp/server/checkout.go) is cloned into
// the store's directory, under workspaces/<session id>, so that the disk
// bounds see it, and deleting the session deletes it.

package session

import (
	"io/fs"
	"os"
	"path/filepath"
)

// workspacesDir is the subdirectory of the store's directory that holds
// the sessions' own workspaces.
const workspacesDir = "workspaces"

// WorkspaceDir returns where session id's own workspace (a checkout) goes:
// workspaces/<id> in the store's directory. Nothing is created. Deleting
// the session ([Store.Delete], [Store.ForceDelete]) removes it.
func (s *Store) WorkspaceDir(id string) string {
	return filepath.Join(s.dir, workspacesDir, id)
}

// CheckCreate refuses, as [Store.Create] does, while the free-space or the
// state bound refuses a new session; it is for work that fills the state
// directory before Create runs (a checkout into [Store.WorkspaceDir]),
// which must not start while Create would refuse. The error is a
// [*LimitError] naming session id.
func (s *Store) CheckCreate(id string) error {
	if err := s.checkFree(id); err != nil {
		return err
	}
	return s.checkState(id)
}

// CountWorkspace adds what session id's workspace holds to the count of
// the state bound (if it counts), once it has been filled. What the
// session writes there later is counted when the store counts its
// directory again (see recountIfChanged).
func (s *Store) CountWorkspace(id string) {
	if s.counting {
		s.stateGrew(treeSize(s.WorkspaceDir(id)))
	}
}

// RemoveWorkspace removes session id's workspace, if it has one, and takes
// its bytes off the count of the state bound. An invalid id is not an
// error: it has no workspace.
func (s *Store) RemoveWorkspace(id string) error {
	if !ValidID(id) {
		return nil
	}
	dir := s.WorkspaceDir(id)
	var size int64
	if s.counting {
		size = treeSize(dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		// What is left is counted again at the next count.
		return err
	}
	s.stateGrew(-size)
	return nil
}

// treeSize is the bytes of the regular files under dir; what cannot be
// read counts nothing, and a dir that does not exist holds 0.
func treeSize(dir string) int64 {
	var total int64
	// The walk never stops: the callback returns nil for what it cannot
	// read (gone since, or unreadable), so its error is always nil.
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}
