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

// BeginWorkspace refuses, as [Store.Create] does, while the free-space or
// the state bound refuses a new session, and while the sessions and the
// other workspaces being filled hold the state bound; it is for work that
// fills the state directory before Create runs (a checkout into
// [Store.WorkspaceDir]), which must not start while Create would refuse.
// Otherwise session id's workspace is being filled from now on: every
// check of it, and of the other workspaces being filled, counts it (the
// size its last check saw), so that workspaces filled at once (checkouts
// of several connections) hold the state bound together, not each alone.
// The caller ends it with [Store.CountWorkspace] once it is filled, or
// with [Store.DropWorkspace]. The error is a [*LimitError] naming session
// id; a refused workspace is not begun.
func (s *Store) BeginWorkspace(id string) error {
	if err := s.checkFree(id); err != nil {
		return err
	}
	if err := s.checkState(id); err != nil {
		return err
	}
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if err := s.holdsStateLocked(id, 0); err != nil {
		return err
	}
	s.filling[id] = 0
	return nil
}

// LogWorkspaceBound is logged, once per store, when a workspace is
// refused because with it the sessions would hold the state bound.
const LogWorkspaceBound = "a session's checkout, with the others under way, takes the sessions in the state directory to their bound; it is not made, or stopped and removed, and the session not created"

// CheckWorkspace refuses session id's workspace, begun with
// [Store.BeginWorkspace], while it is being filled, when the state
// directory's file system is below the free-space bound or the sessions
// would hold the state bound with it and the other workspaces being
// filled (none of them is counted in the sessions yet). The error is a
// [*LimitError]; the caller stops filling the workspace and drops it
// ([Store.DropWorkspace]). The first refusal by the state bound is
// logged.
func (s *Store) CheckWorkspace(id string) error {
	return s.checkWorkspace(id, false)
}

// CountWorkspace checks session id's workspace, once filled, as
// CheckWorkspace does, and then adds what it holds to the count of the
// state bound (if it counts): it is no longer being filled. What the
// session writes there later is counted when the store counts its
// directory again (see recountIfChanged). A refused workspace stays begun
// until the caller drops it.
func (s *Store) CountWorkspace(id string) error {
	return s.checkWorkspace(id, true)
}

// checkWorkspace is CheckWorkspace, and CountWorkspace when filled is
// set. A refused workspace counts nothing in the other workspaces' checks
// from then on: it is being stopped and removed, and counting its bytes,
// which are about to go, would refuse the others too (each refusing each
// other, none would be made).
func (s *Store) checkWorkspace(id string, filled bool) error {
	err := s.checkFree(id)
	var size int64
	if err == nil && s.counting {
		size = treeSize(s.WorkspaceDir(id))
	}
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if err == nil {
		err = s.holdsStateLocked(id, size)
	}
	_, begun := s.filling[id]
	switch {
	case !begun:
	case err != nil:
		s.filling[id] = 0
	case filled:
		delete(s.filling, id)
		s.stateGrew(size)
	default:
		s.filling[id] = size
	}
	return err
}

// holdsStateLocked refuses session id's workspace, holding size bytes,
// when the sessions would hold the state bound with it and every other
// workspace being filled. The first such refusal is logged. The caller
// holds countMu.
func (s *Store) holdsStateLocked(id string, size int64) error {
	limit := s.limits.MaxStateBytes
	if limit <= 0 {
		return nil
	}
	held, filling := s.stateBytes.Load()+size, int64(0)
	for other, n := range s.filling {
		if other != id {
			filling += n
		}
	}
	held += filling
	if held < limit {
		return nil
	}
	if !s.workspaceRefused.Swap(true) {
		s.logger.Warn(LogWorkspaceBound, "session", id, "setting", s.limits.Settings.MaxStateBytes, "dir", s.dir, "bytes", held, "filling", filling, "limit", limit)
	}
	return &LimitError{Setting: s.limits.Settings.MaxStateBytes, Limit: limit, SessionID: id, Sessions: s.dir, Held: held}
}

// DropWorkspace removes session id's workspace, begun with
// [Store.BeginWorkspace] and not counted (its filling failed or was
// refused); from then on no check counts it. What cannot be removed is
// counted at the next count of the directory.
func (s *Store) DropWorkspace(id string) error {
	err := os.RemoveAll(s.WorkspaceDir(id))
	s.countMu.Lock()
	delete(s.filling, id)
	s.countMu.Unlock()
	return err
}

// settledWorkspaces is the bytes of the workspaces in the store's
// directory but those being filled, which the checks of the workspaces
// count instead (see BeginWorkspace): counting them here too would count
// them twice, and count a workspace refused and about to be removed as
// settled. The caller holds countMu.
func (s *Store) settledWorkspaces() int64 {
	dir := filepath.Join(s.dir, workspacesDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0 // none yet
	}
	var total int64
	for _, e := range entries {
		if _, filling := s.filling[e.Name()]; !filling {
			total += treeSize(filepath.Join(dir, e.Name()))
		}
	}
	return total
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
