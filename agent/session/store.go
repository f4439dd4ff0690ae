// This file implements the store: a state directory of journals and the
// sidecar index that session/list reads.

package session

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/internal/dirsync"
)

// Meta is the first record of every journal the [Store] creates. Further
// initial state (mode, model, config) belongs in a [KindState] record.
type Meta struct {
	SessionID             string    `json:"sessionId"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	CreatedAt             time.Time `json:"createdAt"`
	// ParentID and Depth are set for a subagent child: the session that
	// started it and how deep it is (1 for a direct child).
	ParentID string `json:"parentId,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	// MaxDepth is the delegation depth limit an ACP parent set for the
	// session's subtree; it binds whenever the session is open. Nil: the
	// daemon's own limit.
	MaxDepth *int `json:"maxDepth,omitempty"`
	// Budget is what an ACP parent let the session and everything it
	// delegates spend; it binds whenever the session is open (counted from
	// zero each time). Nil: unbounded.
	Budget *budget.Limits `json:"budget,omitempty"`
	// Hidden keeps a session out of List even without a parent here, for
	// a session an ACP parent created in this daemon for its subagent.
	Hidden bool `json:"hidden,omitempty"`
}

// Info is a session's sidecar: what session/list shows, readable without
// the journal.
type Info struct {
	SessionID             string    `json:"sessionId"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Title                 string    `json:"title,omitempty"`
	CreatedAt             time.Time `json:"createdAt"`
	// UpdatedAt is the time of the last durable activity.
	UpdatedAt time.Time `json:"updatedAt"`
	ParentID  string    `json:"parentId,omitempty"`
	Depth     int       `json:"depth,omitempty"`
	Hidden    bool      `json:"hidden,omitempty"`
}

// Listed reports whether List shows the session: not a subagent child and
// not hidden.
func (i *Info) Listed() bool { return i.ParentID == "" && !i.Hidden }

func infoFromMeta(m *Meta) Info {
	return Info{
		SessionID:             m.SessionID,
		Cwd:                   m.Cwd,
		AdditionalDirectories: m.AdditionalDirectories,
		CreatedAt:             m.CreatedAt,
		UpdatedAt:             m.CreatedAt,
		ParentID:              m.ParentID,
		Depth:                 m.Depth,
		Hidden:                m.Hidden,
	}
}

// ErrInvalidCursor is a List cursor that no List returned.
var ErrInvalidCursor = errors.New("session: invalid cursor")

// Page sizes of List.
const (
	// DefaultPageSize is used for a page size of zero or less.
	DefaultPageSize = 50
	// MaxPageSize caps larger page sizes.
	MaxPageSize = 500
)

// DefaultDir returns the default state directory of session journals:
// $XDG_STATE_HOME/dshd/sessions, or ~/.local/state/dshd/sessions when
// XDG_STATE_HOME is unset or not absolute (as the XDG spec asks).
func DefaultDir() (string, error) { return DefaultDirOf(os.LookupEnv) }

// DefaultDirOf is [DefaultDir] in the environment lookupEnv reads, which
// may be another process's: the acp provider asks where a child dshd
// will keep its journals.
func DefaultDirOf(lookupEnv func(string) (string, bool)) (string, error) {
	if d, _ := lookupEnv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "dshd", "sessions"), nil
	}
	// The variable os.UserHomeDir reads.
	name := "HOME"
	switch runtime.GOOS {
	case "windows":
		name = "USERPROFILE"
	case "plan9":
		name = "home"
	}
	home, _ := lookupEnv(name)
	if home == "" {
		return "", fmt.Errorf("session: state directory: $%s is not defined", name)
	}
	return filepath.Join(home, ".local", "state", "dshd", "sessions"), nil
}

// StoreOptions configures [NewStore]. The zero value is ready to use.
type StoreOptions struct {
	// Logger receives warnings (skipped journal lines, rebuilt sidecars);
	// nil discards them.
	Logger *slog.Logger
	// Now stamps records and creation times; nil means time.Now.
	Now func() time.Time
	// OpenJournals is how many journal files the store keeps open at once
	// (0: [DefaultOpenJournals]); a journal beyond it reopens its file when
	// it next writes.
	OpenJournals int
	// Limits bound the store's use of the disk (see [DiskLimits]).
	Limits DiskLimits

	// freeSpace, when set, stands in for the file system's free space
	// (tests); nil is the platform's, where it has one.
	freeSpace func(dir string) (int64, error)
	// open opens journal files; nil is the real file system (tests inject
	// failures).
	open openFunc
}

// Store is a state directory of session journals and their sidecars. Its
// methods are safe for concurrent use.
type Store struct {
	dir    string
	logger *slog.Logger
	now    func() time.Time
	files  *fileCache
	open   openFunc
	limits DiskLimits
	// freeSpace returns the space available to us on a directory's file
	// system; nil where the platform cannot say.
	freeSpace func(dir string) (int64, error)
	// lowDisk is set while the free-space bound refuses, statFailed once
	// the free space could not be read, forkRefused once the journal bound
	// refused a fork, workspaceRefused once the state bound refused a
	// workspace: each is logged once.
	lowDisk, statFailed, forkRefused, workspaceRefused atomic.Bool
	// stateBytes counts the bytes of the journals and sidecars in dir
	// while counting (the state bound is set; see countState); stateFull
	// is set while that bound refuses.
	stateBytes atomic.Int64
	counting   bool
	stateFull  atomic.Bool
	// countMu guards countedAt, the modification time dir had when it
	// was last counted: a file created or removed since (by any
	// process) changes it, and the bound counts again before it refuses.
	countMu   sync.Mutex
	countedAt time.Time
	// filling holds the workspaces being filled (BeginWorkspace) by
	// session id, with the bytes each held at its last check, 0 once
	// refused; guarded by countMu.
	filling map[string]int64
	// mu serialises sidecar read-modify-writes within this process.
	mu sync.Mutex
	// later holds, per session, the sidecar changes a failed rewrite (a
	// full disk) left out, oldest first; guarded by mu.
	later map[string][]func(*Info)

	// cache holds each sidecar as List last read it, keyed by id, with the
	// file's identity; a sidecar whose file is still the same inode with
	// the same size and mtime is not read again. Every rewrite (ours or
	// another process's) renames a new file in, which changes the inode.
	cacheMu sync.Mutex
	cache   map[string]cachedInfo

	// locks marks the sessions whose journals the store has open, for
	// other processes to see (see lock.go).
	locks *locks
}

type cachedInfo struct {
	fi   fs.FileInfo
	info Info
}

// NewStore opens the state directory dir, creating it (mode 0700) when
// needed. opts may be nil.
func NewStore(dir string, opts *StoreOptions) (*Store, error) {
	var o StoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("session: state directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("session: state directory: %w", err)
	}
	if o.freeSpace == nil {
		o.freeSpace = freeSpace
	}
	s := &Store{dir: abs, logger: o.Logger, now: o.Now, files: newFileCache(o.OpenJournals), open: o.open, limits: o.Limits.named(), freeSpace: o.freeSpace,
		later: map[string][]func(*Info){}, filling: map[string]int64{}, cache: make(map[string]cachedInfo), locks: newLocks(abs, o.Logger)}
	if err := s.countState(); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) sidecarPath(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *Store) journalOptions() *JournalOptions {
	o := &JournalOptions{Logger: s.logger, Now: s.now, files: s.files, open: s.open}
	if s.counting {
		o.grew = s.stateGrew
	}
	return o
}

// Create starts the journal of meta.SessionID with meta as its first
// record, and its sidecar. A zero CreatedAt is set to now. While the
// state directory's file system is below the free-space bound, or its
// sessions hold the state bound, nothing is created and the error is a
// [*LimitError]. The returned
// journal keeps the sidecar's UpdatedAt current: each Sync or Close that
// made new records durable moves it to the last record's time. The
// session is locked (see [ErrHeld]) until the journal is closed.
func (s *Store) Create(meta Meta) (*Journal, error) {
	if err := checkID(meta.SessionID); err != nil {
		return nil, err
	}
	if err := s.checkFree(meta.SessionID); err != nil {
		return nil, err
	}
	if err := s.checkState(meta.SessionID); err != nil {
		return nil, err
	}
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = s.now().UTC()
	}
	if err := s.locks.hold(meta.SessionID); err != nil {
		return nil, err
	}
	j, err := CreateJournal(s.dir, meta.SessionID, &meta, s.journalOptions())
	if err != nil {
		s.locks.let(meta.SessionID)
		return nil, err
	}
	s.holdUntilClosed(j)
	info := infoFromMeta(&meta)
	s.mu.Lock()
	err = s.writeInfo(&info)
	s.mu.Unlock()
	if err == nil {
		err = dirsync.Sync(s.dir)
	}
	if err != nil {
		j.Close()
		s.remove(j.Path())
		s.remove(s.sidecarPath(meta.SessionID))
		return nil, fmt.Errorf("session: create: %w", err)
	}
	s.attach(j)
	return j, nil
}

// Open opens the journal of session id and returns its records (see
// [OpenJournal]). A missing or damaged sidecar is rebuilt from the
// journal. Like one from Create, the journal keeps the sidecar current,
// and the session is locked until the journal is closed: a session
// another process has open fails with ErrHeld, since two writers of one
// journal would write over each other's records.
func (s *Store) Open(id string) (*Journal, []Record, error) {
	if err := checkID(id); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err := s.locks.hold(id); err != nil {
		return nil, nil, err
	}
	j, recs, err := OpenJournal(s.dir, id, s.journalOptions())
	if err != nil {
		s.locks.let(id)
		return nil, nil, err
	}
	s.holdUntilClosed(j)
	if _, err := s.readInfo(id); err != nil {
		s.logger.Warn("rebuilding session sidecar", "session", id, "err", err)
		if info, ok := infoFromRecords(id, recs); ok {
			s.mu.Lock()
			err = s.writeInfo(&info)
			s.mu.Unlock()
		} else {
			err = errors.New("journal has no meta record")
		}
		if err != nil {
			s.logger.Warn("cannot rebuild session sidecar", "session", id, "err", err)
		}
	}
	s.attach(j)
	return j, recs, nil
}

// holdUntilClosed lets go of the lock on j's session when j closes.
func (s *Store) holdUntilClosed(j *Journal) {
	id := j.ID()
	j.unhold = func() { s.locks.let(id) }
}

// attach makes j keep its session's sidecar current. The sidecar's update
// time is rewritten at most once per sidecarInterval while the journal is
// open (a turn pays one fsync, not a sidecar rewrite too), and always when
// it closes, so a listing is at most that far behind a live session. A
// sync also rewrites a sidecar whose last change could not be written: the
// disk takes writes again.
func (s *Store) attach(j *Journal) {
	id := j.ID()
	var mu sync.Mutex
	var written time.Time
	j.onSync = func(last time.Time, closing bool) {
		mu.Lock()
		defer mu.Unlock()
		s.mu.Lock()
		behind := len(s.later[id]) > 0
		s.mu.Unlock()
		if !behind && (!last.After(written) || (!closing && last.Sub(written) < sidecarInterval)) {
			return
		}
		err := s.Update(id, func(i *Info) {
			if last.After(i.UpdatedAt) {
				i.UpdatedAt = last
			}
		})
		if err != nil { // logged by Update; deleted sessions stay deleted
			return
		}
		written = last
	}
}

// sidecarInterval bounds how often an open journal rewrites its sidecar.
const sidecarInterval = time.Second

// Exists reports whether session id has a journal.
func (s *Store) Exists(id string) bool {
	if !ValidID(id) {
		return false
	}
	_, err := os.Stat(JournalPath(s.dir, id))
	return err == nil
}

// Leftover returns the sidecar of id when it has one but no journal: no
// session (List warns of it and skips it), an index entry that Delete
// removes. "" otherwise.
func (s *Store) Leftover(id string) string {
	if !ValidID(id) || s.Exists(id) {
		return ""
	}
	path := s.sidecarPath(id)
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	return path
}

// Info returns the sidecar of session id.
func (s *Store) Info(id string) (Info, error) {
	if err := checkID(id); err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return s.readInfo(id)
}

// Update changes the sidecar of session id with fn and rewrites it
// atomically. It never creates a sidecar: a missing one is ErrNotFound.
// fn must not change SessionID. When the sidecar cannot be read or
// rewritten (a full disk), Update returns the error and keeps fn: it is
// applied, in order, before the next change of that sidecar, and after the
// session's journal next syncs (the disk takes writes again).
func (s *Store) Update(id string, fn func(*Info)) error {
	if err := checkID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fns := append(s.later[id], fn)
	delete(s.later, id)
	info, err := s.readInfo(id)
	if err == nil {
		for _, fn := range fns {
			fn(&info)
		}
		info.SessionID = id
		err = s.writeInfo(&info)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		if len(fns) == 1 {
			s.logger.Warn("cannot update session sidecar; trying again after the next change or sync", "session", id, "err", err)
		}
		s.later[id] = fns
	}
	return err
}

// Touch sets the last activity time of session id.
func (s *Store) Touch(id string, t time.Time) error {
	return s.Update(id, func(i *Info) { i.UpdatedAt = t.UTC() })
}

// SetTitle sets the title of session id ("" clears it) and touches it.
func (s *Store) SetTitle(id, title string) error {
	now := s.now().UTC()
	return s.Update(id, func(i *Info) {
		i.Title = title
		if now.After(i.UpdatedAt) {
			i.UpdatedAt = now
		}
	})
}

// Delete removes the journal and sidecar of session id, and its own
// workspace if it has one (see [Store.WorkspaceDir]). An unknown (or
// invalid) id is not an error. A session that is open, in this store or
// in another process, is not deleted: the error is ErrHeld. The session
// is locked while its files are removed, so no process opens it
// meanwhile.
func (s *Store) Delete(id string) error {
	if !ValidID(id) {
		return nil
	}
	unlock, err := s.locks.claim(id)
	if err != nil {
		return err
	}
	defer unlock()
	return s.removeSession(id)
}

// ForceDelete removes the journal, sidecar and workspace of session id even when a
// process has it open, and reports whether one had: that process's
// journal finds its file gone when it next checks (at its next turn's
// end at the latest) and saves nothing more of the session (see
// [ErrJournalGone]).
func (s *Store) ForceDelete(id string) (held bool, err error) {
	if !ValidID(id) {
		return false, nil
	}
	unlock, err := s.locks.claim(id)
	held = err != nil // claim fails only with ErrHeld
	if !held {
		defer unlock()
	}
	return held, s.removeSession(id)
}

// ErrNotSessionFile is a Delete refused because a path of the session's
// files holds what dshd never writes there (a directory): it is left
// alone, and so is the rest of the session.
var ErrNotSessionFile = errors.New("session: not a session's file")

// removeSession removes the files of session id.
func (s *Store) removeSession(id string) error {
	for _, path := range []string{s.sidecarPath(id), JournalPath(s.dir, id)} {
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			what := "not a regular file"
			if fi.IsDir() {
				what = "a directory"
			}
			return fmt.Errorf("%w: %s is %s; nothing of %s was deleted", ErrNotSessionFile, path, what, id)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The sidecar goes first: a crash in between leaves a journal that
	// List does not show, never a listed session without a journal.
	s.forget(id)
	delete(s.later, id)
	err1 := s.remove(s.sidecarPath(id))
	err2 := s.remove(JournalPath(s.dir, id))
	// Its own workspace (a checkout) goes with it: it was kept past
	// close only so that a load could work there again.
	err3 := s.RemoveWorkspace(id)
	var errs []error
	for _, err := range []error{err1, err2, err3} {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("session: delete: %w", err)
	}
	return nil
}

// remove removes the file at path and takes its bytes off the count of
// the store's directory.
func (s *Store) remove(path string) error {
	var size int64
	if s.counting {
		size = fileSize(path)
	}
	err := os.Remove(path)
	if err == nil {
		s.stateGrew(-size)
	}
	return err
}

// List returns a page of the listed sessions (see [Info.Listed]), most
// recently updated first (ties by id), optionally only those whose cwd is
// exactly cwd. cursor is "" for the first page or a nextCursor from an
// earlier List; nextCursor is "" on the last page. A cursor List did not
// make is ErrInvalidCursor. pageSize is capped to [MaxPageSize]; zero or
// less means [DefaultPageSize].
func (s *Store) List(cwd, cursor string, pageSize int) (infos []Info, nextCursor string, err error) {
	var after *listKey
	if cursor != "" {
		k, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		after = &k
	}
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)

	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, "", fmt.Errorf("session: list: %w", err)
	}
	all := make([]Info, 0, len(entries)/2)
	seen := make(map[string]bool, len(entries)/2)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		seen[id] = true
		info, err := s.listInfo(id, e)
		if err != nil {
			if info, err = s.repairInfo(id, err); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					// An index entry whose journal is gone: `dshd sessions
					// delete ID` removes it, and the warning says so.
					s.logger.Warn("skipping a session sidecar without a journal", "session", id, "err", err, "remove", "dshd sessions delete "+id)
					continue
				}
				s.logger.Warn("skipping unreadable session sidecar", "session", id, "err", err)
				continue
			}
		}
		if !info.Listed() || (cwd != "" && info.Cwd != cwd) {
			continue
		}
		all = append(all, info)
	}
	s.pruneCache(seen)
	slices.SortFunc(all, func(a, b Info) int { return keyOf(&a).compare(keyOf(&b)) })
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, *after, func(i Info, k listKey) int {
			if c := keyOf(&i).compare(k); c != 0 {
				return c
			}
			return -1 // the cursor's own entry is behind us
		})
	}
	end := min(start+pageSize, len(all))
	page := all[start:end]
	if end < len(all) {
		nextCursor = encodeCursor(keyOf(&page[len(page)-1]))
	}
	return slices.Clip(page), nextCursor, nil
}

// listInfo returns a sidecar for List, from the cache when its file has
// not changed since List last read it.
func (s *Store) listInfo(id string, e fs.DirEntry) (Info, error) {
	fi, err := e.Info()
	if err != nil {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	s.cacheMu.Lock()
	c, ok := s.cache[id]
	s.cacheMu.Unlock()
	if ok && os.SameFile(c.fi, fi) && c.fi.Size() == fi.Size() && c.fi.ModTime().Equal(fi.ModTime()) {
		return c.info, nil
	}
	f, err := os.Open(s.sidecarPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Info{}, fmt.Errorf("session: read sidecar: %w", err)
	}
	defer f.Close()
	// The identity comes from the open file, so it matches what is read
	// even if the sidecar is replaced meanwhile.
	fi, err = f.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("session: read sidecar: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return Info{}, fmt.Errorf("session: read sidecar: %w", err)
	}
	info, err := decodeInfo(id, b)
	if err != nil {
		return Info{}, err
	}
	s.cacheMu.Lock()
	s.cache[id] = cachedInfo{fi: fi, info: info}
	s.cacheMu.Unlock()
	return info, nil
}

func (s *Store) forget(id string) {
	s.cacheMu.Lock()
	delete(s.cache, id)
	s.cacheMu.Unlock()
}

func (s *Store) pruneCache(keep map[string]bool) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	for id := range s.cache {
		if !keep[id] {
			delete(s.cache, id)
		}
	}
}

// repairInfo rebuilds a damaged sidecar from its journal, for List.
func (s *Store) repairInfo(id string, cause error) (Info, error) {
	if errors.Is(cause, ErrNotFound) {
		return Info{}, cause
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if info, err := s.readInfo(id); err == nil { // someone else repaired it
		return info, nil
	}
	f, err := os.Open(JournalPath(s.dir, id))
	if err != nil {
		return Info{}, errors.Join(cause, err)
	}
	recs, _, _, err := readRecords(f, s.logger.With("session", id))
	f.Close()
	if err != nil {
		return Info{}, errors.Join(cause, err)
	}
	info, ok := infoFromRecords(id, recs)
	if !ok {
		return Info{}, errors.Join(cause, errors.New("journal has no meta record"))
	}
	s.logger.Warn("rebuilt session sidecar", "session", id, "err", cause)
	if err := s.writeInfo(&info); err != nil {
		// Listed all the same; the next List rebuilds it again.
		s.logger.Warn("cannot write the rebuilt session sidecar", "session", id, "err", err)
	}
	return info, nil
}

// infoFromRecords rebuilds a sidecar from a journal: the meta record, the
// last title set by a state record, and the last record's time.
func infoFromRecords(id string, recs []Record) (Info, bool) {
	if len(recs) == 0 || recs[0].Kind != KindMeta {
		return Info{}, false
	}
	var m Meta
	if recs[0].Decode(&m) != nil || m.SessionID != id {
		return Info{}, false
	}
	info := infoFromMeta(&m)
	for _, r := range recs {
		if r.Time.After(info.UpdatedAt) {
			info.UpdatedAt = r.Time
		}
		if r.Kind == KindState {
			var st struct {
				Title *string `json:"title"`
			}
			if r.Decode(&st) == nil && st.Title != nil {
				info.Title = *st.Title
			}
		}
	}
	return info, true
}

func (s *Store) readInfo(id string) (Info, error) {
	b, err := os.ReadFile(s.sidecarPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Info{}, fmt.Errorf("session: read sidecar: %w", err)
	}
	return decodeInfo(id, b)
}

func decodeInfo(id string, b []byte) (Info, error) {
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("session: sidecar of %q: %w", id, err)
	}
	if info.SessionID != id {
		return Info{}, fmt.Errorf("session: sidecar of %q names %q", id, info.SessionID)
	}
	return info, nil
}

// writeInfo replaces a sidecar atomically: a reader sees the old or the
// new file, never a partial one. The temp name starts with a dot, which
// no session id does. The sidecar is not fsynced: it is derived from the
// journal (which is): a sidecar a crash left empty or damaged is rebuilt
// from the journal on the next Open or List, and at worst its update time
// is one turn behind. That keeps a turn's end at one fsync.
func (s *Store) writeInfo(info *Info) error {
	s.forget(info.SessionID)
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	open := s.open
	if open == nil {
		open = openOSFile
	}
	var f journalFile
	var tmp string
	for range 10 {
		tmp = filepath.Join(s.dir, "."+info.SessionID+".json."+rand.Text()[:8]+".tmp")
		if f, err = open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("session: write sidecar: %w", err)
	}
	_, err = f.WriteAt(b, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var old int64
		if s.counting {
			old = fileSize(s.sidecarPath(info.SessionID))
		}
		if err = os.Rename(tmp, s.sidecarPath(info.SessionID)); err == nil {
			s.stateGrew(int64(len(b)) - old)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session: write sidecar: %w", err)
	}
	return nil
}

// listKey orders sessions for List: newest first, then by id.
type listKey struct {
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
}

func keyOf(i *Info) listKey { return listKey{UpdatedAt: i.UpdatedAt.UnixNano(), ID: i.SessionID} }

func (k listKey) compare(o listKey) int {
	if c := cmp.Compare(o.UpdatedAt, k.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(k.ID, o.ID)
}

func encodeCursor(k listKey) string {
	b, _ := json.Marshal(k) // two plain fields always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string) (listKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return listKey{}, fmt.Errorf("%w: %q", ErrInvalidCursor, c)
	}
	var k listKey
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&k); err != nil || d.More() || !ValidID(k.ID) {
		return listKey{}, fmt.Errorf("%w: %q", ErrInvalidCursor, c)
	}
	return k, nil
}
