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

// LogWorkspaceBound is logged, once per store, when a workspace is
// refused because with it the sessions would hold the state bound.
const LogWorkspaceBound = "a session's checkout takes the sessions in the state directory to their bound; it is removed and the session not created"

// CheckWorkspace refuses session id's workspace, while it is being filled
// or once it is, when the state directory's file system is below the
// free-space bound or the sessions would hold the state bound with it
// (the workspace is not counted yet). The error is a [*LimitError]; the
// caller stops filling the workspace and removes it. The first refusal by
// the state bound is logged.
func (s *Store) CheckWorkspace(id string) error {
	_, err := s.checkWorkspace(id)
	return err
}

// CountWorkspace checks session id's workspace, once filled, as
// CheckWorkspace does, and adds what it holds to the count of the state
// bound (if it counts). What the session writes there later is counted
// when the store counts its directory again (see recountIfChanged); a
// count taken between the clone's end and this call counts it twice
// until the next, erring on the side of the bound.
func (s *Store) CountWorkspace(id string) error {
	size, err := s.checkWorkspace(id)
	if err == nil {
		s.stateGrew(size)
	}
	return err
}

// checkWorkspace is CheckWorkspace, returning the workspace's size when
// the state bound counts.
func (s *Store) checkWorkspace(id string) (int64, error) {
	if err := s.checkFree(id); err != nil {
		return 0, err
	}
	limit := s.limits.MaxStateBytes
	if limit <= 0 {
		return 0, nil
	}
	size := treeSize(s.WorkspaceDir(id))
	held := s.stateBytes.Load() + size
	if held < limit {
		return size, nil
	}
	if !s.workspaceRefused.Swap(true) {
		s.logger.Warn(LogWorkspaceBound, "session", id, "setting", s.limits.Settings.MaxStateBytes, "dir", s.dir, "bytes", held, "limit", limit)
	}
	return 0, &LimitError{Setting: s.limits.Settings.MaxStateBytes, Limit: limit, SessionID: id, Sessions: s.dir, Held: held}
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
