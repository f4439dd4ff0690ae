// This file bounds the store's use of the disk: the size a journal may
// reach before its session takes no new prompt, the size all sessions in
// the store's directory may reach before no prompt runs and no journal is
// created, and the free space the state directory's file system keeps
// before the same. Each is checked before anything is run or
// recorded; the full-disk handling of the journal stays for what slips
// past them (another process filling the disk during a turn).

package session

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/dshd/dshd/internal/settingnames"
)

// DiskLimits bound a [Store]'s use of the disk. The zero value bounds
// nothing.
type DiskLimits struct {
	// MaxJournalBytes: a session whose journal is at or above it takes no
	// new prompt, and a fork whose journal would start there is not made
	// (0: unbounded). A turn already running may finish past it: its own
	// limits bound what it writes.
	MaxJournalBytes int64
	// MinFreeBytes: while the state directory's file system has less
	// space available to us, no prompt runs and no journal is created (0:
	// not checked; not checked either where the platform cannot say, see
	// freeSpace).
	MinFreeBytes int64
	// MaxStateBytes: while the journals, sidecars and workspaces (see
	// Store.WorkspaceDir) in the store's directory hold this many bytes or
	// more, no prompt runs and no journal is created (0: unbounded). It is what to set under a quota
	// the file system's free space does not show (a Kubernetes emptyDir's
	// sizeLimit). The store counts what it found at start, plus what its
	// own journals and sidecars write, minus what its Delete removes; at
	// the bound it counts the directory again if a file was created or
	// removed there since (see recountIfChanged). Another process's writes
	// to files that already existed are not seen.
	MaxStateBytes int64
	// Settings name the bounds in refusals and logs (the daemon's flags).
	Settings DiskSettings
}

// DiskSettings name the bounds of [DiskLimits] in refusals and logs, one
// field for each bound of the same name; an empty field is that name.
type DiskSettings struct {
	MaxJournalBytes, MinFreeBytes, MaxStateBytes string
}

// named returns l with the empty names of its Settings filled.
func (l DiskLimits) named() DiskLimits {
	settingnames.Fill(&l.Settings)
	return l
}

// The log messages of the first refusal by each bound (the setting, the
// session and the sizes are attributes), for a client that shows the
// refusal itself and need not log it again.
const (
	LogJournalBound = "session journal at its bound; the session takes no new prompt"
	LogForkBound    = "fork not made: its journal would start at the journal bound"
	LogFreeBound    = "state directory's free space below the bound; no prompt runs and no session is created until there is more"
	LogStateBound   = "sessions in the state directory at their bound; no prompt runs and no session is created until sessions are deleted"
)

// LimitError is a prompt, a new session or a fork refused by one of the
// store's [DiskLimits]; nothing was run or recorded. Its message says what
// to do; the caller says what was refused.
type LimitError struct {
	// Setting names the bound (one of DiskLimits' Settings)
	// and Limit is its value.
	Setting string
	Limit   int64
	// SessionID is the session refused: the one prompted, the one a new
	// session or a fork would have been.
	SessionID string
	// Journal is, for the journal bound, the journal's size (a fork's:
	// at least what it would start with).
	Journal int64
	// Fork reports a fork refused by the journal bound.
	Fork bool
	// Dir is the state directory, Free the bytes available on its file
	// system, for the free-space bound.
	Dir  string
	Free int64
	// Sessions is the store's directory, Held the bytes its sessions
	// hold, for the bound of them all.
	Sessions string
	Held     int64
}

func (e *LimitError) Error() string {
	switch {
	case e.Sessions != "":
		return fmt.Sprintf("the sessions in %s hold %s, at or above %s (%d); delete sessions (dshd sessions delete) or raise the setting", e.Sessions, bytesText(e.Held), e.Setting, e.Limit)
	case e.Dir != "":
		return fmt.Sprintf("the state directory %s has %s free, below %s (%d); free some space there, or lower the setting", e.Dir, bytesText(e.Free), e.Setting, e.Limit)
	case e.Fork:
		return fmt.Sprintf("a fork copies the conversation and what a load replays, so its journal would start at %s or more, at or above %s (%d); start a new session", bytesText(e.Journal), e.Setting, e.Limit)
	}
	return fmt.Sprintf("the session's journal is %s, at or above %s (%d); start a new session, or raise the setting", bytesText(e.Journal), e.Setting, e.Limit)
}

// bytesText writes a size for people: 512 bytes, 1.5 KiB, 1.0 GiB.
func bytesText(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/1024, 0
	for v >= 1024 && unit < 4 {
		v /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %s", v, [...]string{"KiB", "MiB", "GiB", "TiB", "PiB"}[unit])
}

// checkJournal refuses a prompt to j's session once j reached the journal
// bound. The first refusal of each open journal is logged.
func (s *Store) checkJournal(j *Journal) error {
	limit := s.limits.MaxJournalBytes
	if limit <= 0 {
		return nil
	}
	size, first := j.overLimit(limit)
	if size < limit {
		return nil
	}
	if first {
		s.logger.Warn(LogJournalBound, "session", j.ID(), "setting", s.limits.Settings.MaxJournalBytes, "bytes", size, "limit", limit)
	}
	return &LimitError{Setting: s.limits.Settings.MaxJournalBytes, Limit: limit, SessionID: j.ID(), Journal: size}
}

// refuseFork refuses fork id once its journal would hold size bytes at
// the journal bound or above: a session that starts there could take no
// prompt. The first such refusal of the store is logged.
func (s *Store) refuseFork(id string, size int64) error {
	limit := s.limits.MaxJournalBytes
	if limit <= 0 || size < limit {
		return nil
	}
	if !s.forkRefused.Swap(true) {
		s.logger.Warn(LogForkBound, "session", id, "setting", s.limits.Settings.MaxJournalBytes, "bytes", size, "limit", limit)
	}
	return &LimitError{Setting: s.limits.Settings.MaxJournalBytes, Limit: limit, SessionID: id, Journal: size, Fork: true}
}

// checkFree refuses to run a prompt of session id, or to create its
// journal, while the state directory's file system has less space than
// the free-space bound. The first refusal of each such episode is logged,
// and its end.
func (s *Store) checkFree(id string) error {
	limit := s.limits.MinFreeBytes
	if limit <= 0 || s.freeSpace == nil {
		return nil
	}
	free, err := s.freeSpace(s.dir)
	if err != nil {
		// The write itself will say whether there is room.
		if !s.statFailed.Swap(true) {
			s.logger.Warn("cannot tell the state directory's free space; the bound is not checked", "setting", s.limits.Settings.MinFreeBytes, "dir", s.dir, "err", err)
		}
		return nil
	}
	refusing := free < limit
	s.logEpisode(&s.lowDisk, refusing, id, LogFreeBound, "free space is back above the bound; prompts run and sessions are created again",
		"setting", s.limits.Settings.MinFreeBytes, "dir", s.dir, "free", free, "limit", limit)
	if !refusing {
		return nil
	}
	return &LimitError{Setting: s.limits.Settings.MinFreeBytes, Limit: limit, SessionID: id, Dir: s.dir, Free: free}
}

// logEpisode logs an episode of a bound's refusals once, when it starts
// (started, naming session id, the first refused) and when it ends
// (ended); refusing says whether it refuses now, and in is set while it
// does.
func (s *Store) logEpisode(in *atomic.Bool, refusing bool, id, started, ended string, attrs ...any) {
	switch was := in.Swap(refusing); {
	case refusing && !was:
		s.logger.Warn(started, append([]any{"session", id}, attrs...)...)
	case !refusing && was:
		s.logger.Info(ended, attrs...)
	}
}

// countState starts the count of the bytes in the store's directory when
// it is bounded: the journals and sidecars there now (one directory read),
// then what the store's journals write (see [JournalOptions.grew]) and
// its sidecar writes and deletes change.
func (s *Store) countState() error {
	if s.limits.MaxStateBytes <= 0 {
		return nil
	}
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if err := s.countDir(); err != nil {
		return fmt.Errorf("session: state directory: %w", err)
	}
	s.counting = true
	return nil
}

// countDir sets the count to what the journals, sidecars and workspaces
// in the store's directory hold now, and notes the directory's modification
// time, read first so that a change during the read is seen next time.
// The caller holds countMu.
func (s *Store) countDir() error {
	di, err := os.Stat(s.dir)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".json")) {
			continue
		}
		if fi, err := e.Info(); err == nil { // gone since the read: not there
			total += fi.Size()
		}
	}
	// The sessions' checkouts are in the state directory too (see
	// WorkspaceDir): a quota counts them.
	total += s.settledWorkspaces()
	s.stateBytes.Store(total)
	s.countedAt = di.ModTime()
	return nil
}

// recountIfChanged counts the store's directory again when a file was
// created or removed there since the last count: a session another
// process deleted (`dshd sessions delete`, another daemon) frees its
// bytes for this one without a restart. One stat when nothing changed;
// writes this daemon makes meanwhile may be missed by a count taken
// while they land, which the bound's approximation allows.
func (s *Store) recountIfChanged() {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	di, err := os.Stat(s.dir)
	if err != nil || di.ModTime().Equal(s.countedAt) {
		return
	}
	if err := s.countDir(); err != nil {
		s.logger.Debug("cannot count the state directory again", "dir", s.dir, "err", err)
	}
}

// stateGrew adds delta bytes to the count of the store's directory, if
// it counts.
func (s *Store) stateGrew(delta int64) {
	if s.counting {
		s.stateBytes.Add(delta)
	}
}

// fileSize is the size of the file at path, 0 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// checkState refuses to run a prompt of session id, or to create its
// journal, while the sessions in the store's directory hold the state
// bound or more. The first refusal of each such episode is logged, and
// its end.
func (s *Store) checkState(id string) error {
	limit := s.limits.MaxStateBytes
	if limit <= 0 {
		return nil
	}
	held := s.stateBytes.Load()
	if held >= limit {
		s.recountIfChanged()
		held = s.stateBytes.Load()
	}
	refusing := held >= limit
	s.logEpisode(&s.stateFull, refusing, id, LogStateBound, "sessions in the state directory are below the bound again; prompts run and sessions are created again",
		"setting", s.limits.Settings.MaxStateBytes, "dir", s.dir, "bytes", held, "limit", limit)
	if !refusing {
		return nil
	}
	return &LimitError{Setting: s.limits.Settings.MaxStateBytes, Limit: limit, SessionID: id, Sessions: s.dir, Held: held}
}

// checkDisk refuses a prompt to s as the store's disk bounds say: a
// [*LimitError] while the state directory's file system is below the
// free-space bound, or once the session's journal reached its bound. A
// session that records nothing is never refused.
func (s *Session) checkDisk() error {
	if s.stored == nil {
		return nil
	}
	st := s.stored.store
	if err := st.checkFree(s.id); err != nil {
		return err
	}
	if err := st.checkState(s.id); err != nil {
		return err
	}
	return st.checkJournal(s.stored.journal)
}

// checkChange refuses a change of mode, model or thinking as checkDisk
// refuses a prompt: each change is recorded (with the updates that tell
// the client), so a client sending them without end would grow the
// journal without end. That holds during a turn too: a turn finishes
// past the bounds, bounded by its own limits, but changes sent while it
// runs (one waiting on a permission question, say) are bounded by
// nothing of the turn's.
func (s *Session) checkChange() error { return s.checkDisk() }

// LogTaskOutputHeld is logged, with the setting, when a running task's
// output stops being recorded because a disk bound is reached.
const LogTaskOutputHeld = "task output not recorded while a disk bound is reached; the task keeps the last of it, recorded when it ends"

// LogRelayHeld is logged, with the setting, when the updates a subagent
// sends stop being recorded (see [Session.RecordRelayed]).
const LogRelayHeld = "subagent's updates not recorded or relayed while a disk bound is reached; the subagent is cancelled"

// outputHeld reports whether a running background task's output record
// is left out of the journal of s, which records: while the disk bounds
// refuse a prompt. A command or a child keeps running after the turn
// that started it, and without this its output records (up to the task's
// output limit each second) would grow the journal past every bound for
// as long as it runs. The task keeps the tail of its output, and the record of its end
// holds it; what is left out is only what a crash would have kept.
func (s *Session) outputHeld() bool {
	return s.heldBack(&s.outputLeftOut, LogTaskOutputHeld, "task output is recorded again") != nil
}

// heldBack returns the bound that refuses a prompt of s now (see
// checkDisk), or nil, for a record of s that nothing of a turn's limits
// bounds: such a record is left out of the journal of s, which records,
// while a bound refuses. leftOut is set while records of its kind are
// left out; the first of each such episode is logged as started, naming
// the setting, and its end as ended.
func (s *Session) heldBack(leftOut *atomic.Bool, started, ended string) *LimitError {
	var le *LimitError
	held := errors.As(s.checkDisk(), &le)
	log := s.stored.store.logger // where the bounds' other refusals go
	switch was := leftOut.Swap(held); {
	case held && !was:
		log.Warn(started, "session", s.id, "setting", le.Setting, "limit", le.Limit)
	case !held && was:
		log.Info(ended, "session", s.id)
	}
	if !held {
		return nil
	}
	return le
}
