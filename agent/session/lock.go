// This file marks the sessions a process has open, so that another
// process (`dshd sessions delete`, another daemon) can tell a session a
// live daemon holds: one lock file per store, <dir>/.lock, and in it an
// advisory lock on one byte per open session, at an offset its id hashes
// to. The kernel drops a process's locks when it ends, however it ends,
// so a crash leaves nothing stale; one descriptor serves every session,
// so a journal that gives its file back (--max-open-journals) stays
// locked.

package session

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// ErrHeld is a session that a process has open: another one, or this
// one through another journal. Such a session is not opened again, and
// [Store.Delete] does not delete it.
var ErrHeld = errors.New("session: the session is open in a running dshd")

// lockName is the store's lock file in its directory. No session id
// starts with a dot, so it names no session's file.
const lockName = ".lock"

// locks holds the locks of a store's open sessions.
type locks struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	f    *os.File        // opened on first use; nil until then
	held map[string]bool // the ids this store holds
	// off is set once the file system cannot lock (logged then): sessions
	// are open unlocked, as before there were locks.
	off bool
}

func newLocks(dir string, log *slog.Logger) *locks {
	return &locks{path: filepath.Join(dir, lockName), log: log, held: map[string]bool{}}
}

// hold locks session id for as long as this store has it open. It fails
// only with ErrHeld: when another process, or this store, has it open, or
// another process is deleting it.
func (l *locks) hold(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.take(id); err != nil {
		return err
	}
	l.held[id] = true
	return nil
}

// let unlocks a session hold locked.
func (l *locks) let(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[id] {
		return
	}
	delete(l.held, id)
	l.untake(id)
}

// claim locks session id while it is deleted, and returns what unlocks
// it; like hold, it fails only with ErrHeld, on a session that is open.
func (l *locks) claim(id string) (unlock func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.take(id); err != nil {
		return nil, err
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.untake(id)
	}, nil
}

// take locks id's byte. l.mu is held.
func (l *locks) take(id string) error {
	if l.held[id] {
		return fmt.Errorf("%w: %q", ErrHeld, id)
	}
	if l.off {
		return nil
	}
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			l.disable(err)
			return nil
		}
		l.f = f
	}
	switch err := lockByte(l.f, lockOffset(id)); {
	case errors.Is(err, errLocked):
		return fmt.Errorf("%w: %q", ErrHeld, id)
	case err != nil:
		l.disable(err)
	}
	return nil
}

// untake unlocks id's byte. l.mu is held.
func (l *locks) untake(id string) {
	if l.off || l.f == nil {
		return
	}
	if err := unlockByte(l.f, lockOffset(id)); err != nil {
		l.log.Warn("cannot unlock a session; another process sees it open until this dshd ends", "session", id, "path", l.path, "err", err)
	}
}

// disable gives up locking where the file system cannot lock (some
// network file systems): what holds what is no longer known there, and a
// session can be deleted while a daemon has it open, which that daemon's
// journal then finds at its next turn's end. l.mu is held.
func (l *locks) disable(err error) {
	l.off = true
	l.log.Warn("sessions cannot be locked here; another process can delete a session this dshd has open", "path", l.path, "err", err)
}

// lockOffset is the byte of the lock file that stands for session id:
// its 64-bit FNV-1a hash cut to 62 bits, so that the offset is a positive
// file offset everywhere and two ids share a byte with a chance of one in
// 2^62.
func lockOffset(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(h.Sum64() >> 2)
}

// errLocked is lockByte's answer for a byte another holder has locked.
var errLocked = errors.New("locked")
