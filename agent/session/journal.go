// This file implements the journal: one append-only JSONL file per
// session.

package session

import (
	"bufio"
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/dirsync"
)

// Record is one line of a journal. The journal interprets only Kind; Data
// belongs to whoever appended it.
type Record struct {
	// Kind says what Data is; see [KindMeta] and its siblings.
	Kind string `json:"k"`
	// Time is when the record was appended (UTC); zero if unknown.
	Time time.Time `json:"t,omitzero"`
	// Data is the record's payload as JSON; nil if the line had none.
	Data json.RawMessage `json:"d"`
}

// Record kinds the session writes.
const (
	// KindMeta is the first record: the session's [Meta].
	KindMeta = "meta"
	// KindUpdate is an ACP session/update payload, replayed on
	// session/load.
	KindUpdate = "update"
	// KindMessage is an LLM conversation message, restoring the model's
	// context.
	KindMessage = "message"
	// KindState is a change of mode, config option or title.
	KindState = "state"
)

// Decode unmarshals the record's Data into v.
func (r Record) Decode(v any) error {
	if r.Data == nil {
		return fmt.Errorf("session: %s record has no data", r.Kind)
	}
	return json.Unmarshal(r.Data, v)
}

// Errors of the journal and the store, matched with errors.Is.
var (
	// ErrInvalidID is a session id that cannot name a file: it must be 1
	// to 128 characters of [A-Za-z0-9._-] starting with a letter or digit.
	ErrInvalidID = errors.New("session: invalid session id")
	// ErrExists is a Create for an id that already has a journal.
	ErrExists = errors.New("session: session already exists")
	// ErrNotFound is an id without a journal (or sidecar). An invalid id
	// matches it too, since no such session can exist.
	ErrNotFound = errors.New("session: session not found")
	// ErrClosed is a call on a closed [Journal].
	ErrClosed = errors.New("session: journal closed")
	// ErrJournalGone is the cause of a [*NotSavedError] whose journal file
	// was deleted, or replaced by another file, while the journal had it
	// open (`dshd sessions delete --force`, a person's rm): what it
	// writes could never be loaded, so it writes nothing more.
	ErrJournalGone = errors.New("the journal file was deleted or replaced by another process")
)

// maxIDLen keeps "<id>.json" and the sidecar's temp names well inside the
// 255-byte file name limit.
const maxIDLen = 128

// ValidID reports whether id can name a session's files: 1 to 128
// characters of [A-Za-z0-9._-], the first a letter or digit (so no
// separator, no "..", no hidden or option-like name).
func ValidID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return nil
}

// JournalPath returns the journal file of session id in dir.
func JournalPath(dir, id string) string { return filepath.Join(dir, id+".jsonl") }

// JournalOptions configures [CreateJournal] and [OpenJournal]. The zero
// value is ready to use.
type JournalOptions struct {
	// Logger receives warnings about skipped lines and failed writes; nil
	// discards them.
	Logger *slog.Logger
	// Now stamps appended records; nil means time.Now.
	Now func() time.Time

	// files, set by a Store, bounds how many journal files are open; nil:
	// the journal keeps its file open until it is closed.
	files *fileCache
	// open opens the file; nil is the real file system (tests inject
	// failing writes and syncs).
	open openFunc
	// grew, set by a Store that bounds the state directory, learns each
	// change of the file's size (see [DiskLimits.MaxStateBytes]).
	grew func(delta int64)
}

func (o *JournalOptions) logger() *slog.Logger {
	if o == nil || o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o *JournalOptions) now() func() time.Time {
	if o == nil || o.Now == nil {
		return time.Now
	}
	return o.Now
}

// maxPending bounds the records a journal holds in memory while it cannot
// write them; beyond it they are lost (see [NotSavedError.Lost]).
const maxPending = 64 << 20

// Journal is an open session journal. Its methods are safe for concurrent
// use.
//
// Appended records reach the file at once, each as one whole line (a large
// one in several writes, as it is encoded); [Journal.Sync] makes them
// durable. When a write or a sync fails (a
// full disk), the journal says so: Append and Sync return a
// [*NotSavedError] until a Sync has written and synced everything again.
// Meanwhile records are kept in order in memory (up to 64 MiB), and a
// failed sync's records are written again from the file, checked against
// the checksum kept of them, before they count as durable. Everything up
// to the last successful Sync stays durable whatever fails after it.
type Journal struct {
	id     string
	path   string
	now    func() time.Time
	logger *slog.Logger
	files  *fileCache
	open   openFunc
	// onSync, set by a Store, learns the time of the last record each time
	// appended records become durable.
	onSync func(last time.Time, closing bool)
	// grew, when set, learns each change of the file's size.
	grew func(delta int64)
	// ident is the file the journal opened, which its path must still
	// name (see [ErrJournalGone]); nil when it could not be told.
	ident os.FileInfo

	mu sync.Mutex
	// f is nil while the file is given back to the cache, and once closed.
	f      journalFile
	elem   *list.Element // the journal's place in files; guarded by files.mu
	closed bool
	// size is where the next record goes: the end of the last whole record
	// written (or of what the file held when it was opened). synced is how
	// much of it is durable; sum is the CRC-32 of the bytes in between.
	size, synced int64
	sum          uint32
	// freshLine is set while the file does not end with a newline (a torn
	// last line): the next record starts with one.
	freshLine bool
	// err is why appended records are not all saved; nil when they are in
	// the file (and, after a Sync, on disk). rewrite says a sync failed,
	// so the bytes after synced must be written again. pending holds the
	// records appended since a failure, whole lines, oldest first. lost
	// is set once records are gone for good.
	err          error
	rewrite      bool
	pending      [][]byte
	pendingBytes int
	lost         error
	last         time.Time
	buf          []byte
	// overLogged is set once the journal bound refused a prompt.
	overLogged bool
	// unhold, set by a Store, unlocks the session once the journal is
	// closed; nil once it ran.
	unhold func()
}

// CreateJournal creates the journal of session id in dir, which must
// exist, writes meta as its first record (kind [KindMeta]) and makes the
// file durable before returning. It fails with ErrExists when the journal
// is already there.
func CreateJournal(dir, id string, meta any, opts *JournalOptions) (*Journal, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	path := JournalPath(dir, id)
	j := newJournal(id, path, opts)
	f, err := j.open(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %q", ErrExists, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: create journal: %w", err)
	}
	j.f = f
	j.ident = identity(f)
	err = j.Append(KindMeta, meta)
	if err == nil {
		err = j.Sync()
	}
	if err == nil {
		err = dirsync.Sync(dir)
	}
	if err != nil {
		j.discard()
		if os.Remove(path) == nil && j.grew != nil {
			j.grew(-j.Size())
		}
		return nil, fmt.Errorf("session: create journal: %w", err)
	}
	return j, nil
}

// OpenJournal opens the journal of session id in dir for appending and
// returns every complete record in it. A line that is not a record — a
// torn last line after a crash, or a corrupt line — is logged and
// skipped, never fatal. A missing journal is ErrNotFound.
func OpenJournal(dir, id string, opts *JournalOptions) (*Journal, []Record, error) {
	if err := checkID(id); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	path := JournalPath(dir, id)
	j := newJournal(id, path, opts)
	f, err := j.open(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session: open journal: %w", err)
	}
	recs, size, clean, err := readRecords(io.NewSectionReader(f, 0, math.MaxInt64), j.logger)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session: read journal: %w", err)
	}
	j.mu.Lock()
	j.f = f
	j.ident = identity(f)
	j.size, j.synced = size, size
	j.freshLine = !clean
	if n := len(recs); n > 0 {
		j.last = recs[n-1].Time
	}
	victim := j.use()
	j.mu.Unlock()
	victim.release()
	return j, recs, nil
}

// identity is what tells f's file from any other, for os.SameFile; nil
// when the system cannot say.
func identity(f journalFile) os.FileInfo {
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	return fi
}

func newJournal(id, path string, opts *JournalOptions) *Journal {
	j := &Journal{
		id:     id,
		path:   path,
		now:    opts.now(),
		logger: opts.logger().With("session", id),
		open:   openOSFile,
	}
	if opts != nil {
		j.files, j.grew = opts.files, opts.grew
		if opts.open != nil {
			j.open = opts.open
		}
	}
	return j
}

// ID returns the session id.
func (j *Journal) ID() string { return j.id }

// Path returns the journal's file.
func (j *Journal) Path() string { return j.path }

// Append adds a record of kind with data marshalled to JSON, stamped with
// the current time. The record reaches the file (the OS, not yet the disk)
// as one whole line before Append returns, so it survives
// the process being killed; [Journal.Sync] makes it survive the machine.
// When it cannot be written, or an earlier record could not be, Append
// returns a [*NotSavedError] and keeps the record for the Sync that
// writes everything again.
func (j *Journal) Append(kind string, data any) error {
	k, now, err := j.stamp(kind)
	if err != nil {
		return err
	}
	if !j.lockOpen() {
		return ErrClosed
	}
	written := false
	if j.lost == nil && j.err == nil {
		var werr error
		if err, werr = j.writeRecord(k, now, data); err == nil && werr != nil {
			j.fail(werr)
		}
		written = err == nil && werr == nil
	}
	if err == nil && !written {
		err = j.keepRecord(k, now, data)
	}
	if err != nil {
		j.mu.Unlock()
		return fmt.Errorf("session: append %s: %w", kind, err)
	}
	if j.lost == nil {
		j.last = now
	}
	if !written {
		err = j.notSaved()
	}
	victim := j.use()
	j.mu.Unlock()
	victim.release()
	return err
}

// stamp returns a record's kind as JSON and its time, now.
func (j *Journal) stamp(kind string) ([]byte, time.Time, error) {
	if kind == "" {
		return nil, time.Time{}, errors.New("session: append: empty record kind")
	}
	return kindJSON(kind), j.now().UTC(), nil
}

// lockOpen locks j and reports true, unless j is closed: then it leaves
// it unlocked and reports false.
func (j *Journal) lockOpen() bool {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return false
	}
	return true
}

// AppendSaved appends a record and makes it durable, or leaves no trace of
// it: when the journal cannot save (records it holds since a failure that
// a sync cannot write yet, or this record's own write or sync failing),
// the record is neither kept nor left in the file, and the error is a
// [*NotSavedError]. It is for a change the caller makes only once it is
// saved (a session's mode): a change refused must not be loaded later.
func (j *Journal) AppendSaved(kind string, data any) error {
	k, now, err := j.stamp(kind)
	if err != nil {
		return err
	}
	if !j.lockOpen() {
		return ErrClosed
	}
	err = j.appendSaved(k, now, data)
	last, onSync := j.last, j.onSync
	victim := j.use()
	j.mu.Unlock()
	victim.release()
	if err != nil {
		return fmt.Errorf("session: append %s: %w", kind, err)
	}
	if onSync != nil {
		onSync(last, false)
	}
	return nil
}

// appendSaved is AppendSaved with j.mu held.
func (j *Journal) appendSaved(kind []byte, now time.Time, data any) error {
	// What could not be written before goes first: a record after a gap
	// would be loaded out of order.
	if j.lost != nil || j.err != nil {
		if _, err := j.sync(); err != nil {
			return err
		}
	}
	size, sum, freshLine := j.size, j.sum, j.freshLine
	err, werr := j.writeRecord(kind, now, data)
	if err != nil {
		return err
	}
	if werr != nil {
		// The file ends where it did (finish cut the line off), and
		// nothing before this record is missing: the journal is not
		// failed by it.
		if j.lost != nil {
			return j.notSaved()
		}
		return &NotSavedError{Err: werr}
	}
	if _, err := j.sync(); err != nil {
		if j.lost == nil {
			j.cut(size, sum, freshLine)
		}
		return j.notSaved()
	}
	j.last = now
	return nil
}

// cut takes the records after size off the end of the file, after a
// failed sync: the journal's state goes back to what it was there (its
// checksum sum, its torn line), so that the sync that writes the unsynced
// bytes again checks and writes only those before size. A file that
// cannot be cut would have a record nobody meant to keep: the journal is
// then lost. j.mu is held.
func (j *Journal) cut(size int64, sum uint32, freshLine bool) {
	err := j.ensureOpen()
	if j.lost != nil {
		return // the file is gone: nothing of it is loaded
	}
	if err == nil {
		err = j.f.Truncate(size)
	}
	if err != nil {
		j.lose(fmt.Errorf("a record that could not be synced could not be cut off the journal (%w): %w", err, j.err))
		return
	}
	if j.grew != nil {
		j.grew(size - j.size)
	}
	j.size, j.sum, j.freshLine = size, sum, freshLine
}

// kindsJSON holds the session's own record kinds as JSON strings, so that
// a record does not pay a json.Marshal for its kind. The slices are only
// ever read.
var kindsJSON = map[string][]byte{
	KindMeta:    []byte(`"` + KindMeta + `"`),
	KindUpdate:  []byte(`"` + KindUpdate + `"`),
	KindMessage: []byte(`"` + KindMessage + `"`),
	KindState:   []byte(`"` + KindState + `"`),
}

// kindJSON returns kind as a JSON string.
func kindJSON(kind string) []byte {
	if k, ok := kindsJSON[kind]; ok {
		return k
	}
	k, _ := json.Marshal(kind) // a string always marshals
	return k
}

// writeRecord writes a record at the journal's end. err is data that does
// not encode, werr a failed write; either way the file ends where it did.
func (j *Journal) writeRecord(kind []byte, now time.Time, data any) (err, werr error) {
	w := j.lineAtEnd()
	err = encodeRecord(&w, kind, now, data)
	if err == nil {
		w.flush()
	}
	return err, j.finish(&w, err)
}

// writeLine writes a held record's line at the journal's end.
func (j *Journal) writeLine(line []byte) error {
	w := j.lineAtEnd()
	w.write(line)
	w.flush()
	return j.finish(&w, nil)
}

// lineAtEnd returns a writer of a line at the journal's end, which first
// ends a torn last line.
func (j *Journal) lineAtEnd() lineWriter {
	w := lineWriter{j: j, buf: j.buf[:0], off: j.size, sum: j.sum}
	if j.freshLine {
		w.buf = append(w.buf, '\n')
	}
	return w
}

// finish ends the line w wrote: the journal grows by it when it was all
// written, else what it wrote is cut off, so the record is written there
// again later. It returns the failed write.
func (j *Journal) finish(w *lineWriter, encodeErr error) error {
	j.reuse(w.buf)
	switch {
	case encodeErr == nil && w.err == nil:
		if j.grew != nil {
			j.grew(w.off - j.size)
		}
		j.size, j.sum, j.freshLine = w.off, w.sum, false
	case w.wrote && j.f != nil:
		_ = j.f.Truncate(j.size) // best effort: the next write lands there anyway
	}
	return w.err
}

// keepRecord encodes a record the journal cannot write now and, unless
// records are lost already, keeps it for the next Sync; it fails only for
// data that does not encode.
func (j *Journal) keepRecord(kind []byte, now time.Time, data any) error {
	w := lineWriter{buf: j.buf[:0]}
	err := encodeRecord(&w, kind, now, data)
	if err == nil && j.lost == nil {
		j.keep(w.buf)
	}
	j.reuse(w.buf)
	return err
}

// reuse keeps b as the buffer of the next record, unless a huge record
// grew it: that is not kept for the session's life.
func (j *Journal) reuse(b []byte) {
	j.buf = b
	if cap(b) > 2*largeData {
		j.buf = nil
	}
}

// ensureOpen opens the file again after the cache took it back. A path
// that names no file, or another file than the one the journal wrote, is
// a journal gone: the error is then the journal's [*NotSavedError].
func (j *Journal) ensureOpen() error {
	if j.f != nil {
		return nil
	}
	f, err := j.open(j.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		j.gone()
		return j.notSaved()
	}
	if err != nil {
		return err
	}
	if fi := identity(f); j.ident != nil && fi != nil && !os.SameFile(fi, j.ident) {
		f.Close()
		j.gone()
		return j.notSaved()
	}
	j.f = f
	return nil
}

// stillThere checks that the journal's path still names the file it
// writes; when it names none, or another, the journal is gone and the
// error is its [*NotSavedError]. One stat; a stat that fails for another
// reason says nothing about the file. j.mu is held.
func (j *Journal) stillThere() error {
	if j.ident == nil || j.lost != nil {
		return nil
	}
	fi, err := os.Stat(j.path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !os.SameFile(fi, j.ident) {
		j.gone()
		return j.notSaved()
	}
	return nil
}

// checkFile is stillThere for a turn about to begin: a session whose
// journal is gone runs no turn, which nothing could load afterwards.
func (j *Journal) checkFile() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	return j.stillThere()
}

// gone gives up on a journal whose file was deleted or replaced: every
// record from now on is refused (see [ErrJournalGone]), and the file is
// closed, which gives a deleted file's space back. j.mu is held.
func (j *Journal) gone() {
	j.logger.Error("session journal deleted or replaced by another process; nothing more of the session can be saved", "path", j.path)
	j.lost = fmt.Errorf("%w: %s", ErrJournalGone, j.path)
	j.pending, j.pendingBytes = nil, 0
	if j.files != nil {
		j.files.drop(j)
	}
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
}

// use tells the cache the journal used its file and returns the journal
// that must give its file back, if any. j.mu is held.
func (j *Journal) use() *Journal {
	if j.files == nil || j.f == nil {
		return nil
	}
	return j.files.use(j)
}

// release closes the file of a journal the cache pushed out, unless it
// used its file again meanwhile. It runs without any other journal's lock
// held.
func (j *Journal) release() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil || !j.files.evicted(j) {
		return
	}
	if err := j.f.Close(); err != nil {
		// What was written may not have reached the file: write it again.
		j.fail(err)
		j.rewrite = true
	}
	j.f = nil
}

// fail records why records are not saved; the first failure of a run of
// them is logged.
func (j *Journal) fail(err error) {
	if j.err == nil && j.lost == nil {
		j.logger.Warn("journal cannot be saved; the session refuses new turns until it can", "path", j.path, "err", err)
	}
	j.err = err
}

// keep holds a record that could not be written, for the next Sync. Past
// maxPending the held records are dropped and the journal is lost.
func (j *Journal) keep(line []byte) {
	if j.pendingBytes+len(line) > maxPending {
		j.lose(fmt.Errorf("more than %d MiB of records could not be written: %w", maxPending>>20, j.err))
		return
	}
	j.pending = append(j.pending, bytes.Clone(line))
	j.pendingBytes += len(line)
}

// lose gives up on records that can never be written: from now on the
// journal refuses every record, since any written after a gap would make
// the session's history inconsistent.
func (j *Journal) lose(cause error) {
	j.logger.Error("journal records lost; the session cannot be saved any more (load it again to continue from what was saved)", "path", j.path, "err", cause)
	j.lost = cause
	j.pending, j.pendingBytes = nil, 0
}

// notSaved is the error of a journal that is not saved. j.mu is held.
func (j *Journal) notSaved() error {
	if j.lost != nil {
		return &NotSavedError{Err: j.lost, Lost: true}
	}
	return &NotSavedError{Err: j.err}
}

// Size returns how many bytes of records the journal's file holds: what
// was written, not what is held in memory while it cannot be.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// overLimit returns the journal's size and, when it is at or above limit
// for the first time, first.
func (j *Journal) overLimit(limit int64) (size int64, first bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.size >= limit && !j.overLogged {
		j.overLogged, first = true, true
	}
	return j.size, first
}

// Err returns nil when every record appended so far is in the file, and
// otherwise the [*NotSavedError] Append and Sync return.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil && j.lost == nil {
		return nil
	}
	return j.notSaved()
}

// Sync makes every record appended so far durable (fdatasync). It is
// cheap when nothing was appended since the last Sync. After a failure it
// first writes what is missing again; it returns a [*NotSavedError] until
// everything is written and synced.
func (j *Journal) Sync() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return ErrClosed
	}
	synced, err := j.sync()
	last, onSync := j.last, j.onSync
	victim := j.use()
	j.mu.Unlock()
	victim.release()
	if err != nil {
		return err
	}
	if synced && onSync != nil {
		onSync(last, false)
	}
	return nil
}

// sync is Sync with j.mu held; synced reports whether records became
// durable.
func (j *Journal) sync() (synced bool, err error) {
	if j.lost != nil {
		return false, j.notSaved()
	}
	if j.err == nil && j.size == j.synced {
		return false, nil
	}
	if j.err != nil {
		if err := j.writeAgain(); err != nil {
			j.err = err
			return false, j.notSaved()
		}
		if j.lost != nil {
			return false, j.notSaved()
		}
	}
	err = j.ensureOpen()
	if err == nil {
		err = j.f.Datasync()
	}
	if j.lost != nil {
		return false, j.notSaved()
	}
	if err != nil {
		j.fail(err)
		j.rewrite = true
		return false, j.notSaved()
	}
	// What was synced counts only if a later load reads it: the path must
	// still name the file written.
	if err := j.stillThere(); err != nil {
		return false, err
	}
	if j.err != nil {
		j.logger.Info("journal saved again", "path", j.path)
	}
	j.err, j.rewrite = nil, false
	j.synced, j.sum = j.size, 0
	return true, nil
}

// writeAgain writes what a failure left out: after a failed sync, the
// bytes since the last good one (read back from the file and checked
// against their checksum, then written in place, so the next sync writes
// them out again), then the records held in memory.
func (j *Journal) writeAgain() error {
	if err := j.ensureOpen(); err != nil {
		return err
	}
	if j.rewrite {
		if err := j.rewriteUnsynced(); err != nil {
			return err
		}
		j.rewrite = false
	}
	for len(j.pending) > 0 {
		line := j.pending[0]
		if err := j.writeLine(line); err != nil {
			return err
		}
		j.pending[0] = nil
		j.pending = j.pending[1:]
		j.pendingBytes -= len(line)
	}
	j.pending = nil
	return nil
}

// rewriteUnsynced writes the bytes between synced and size again where
// they are. When they no longer match what was written (the OS dropped
// them after the failed sync) they are lost.
func (j *Journal) rewriteUnsynced() error {
	buf := make([]byte, min(j.size-j.synced, 64<<10))
	var sum uint32
	for off := j.synced; off < j.size; {
		b := buf[:min(int64(len(buf)), j.size-off)]
		if _, err := j.f.ReadAt(b, off); err != nil {
			return err
		}
		sum = crc32.Update(sum, crc32.IEEETable, b)
		if _, err := j.f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	if sum != j.sum {
		j.lose(fmt.Errorf("the records written after the last sync changed in the file after a failed sync: %w", j.err))
	}
	return nil
}

// Close syncs and closes the journal. Closing again returns nil. Records
// that cannot be saved by then are lost, and Close says so.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	_, syncErr := j.sync()
	closeErr := j.discardLocked()
	last, onSync := j.last, j.onSync
	j.mu.Unlock()
	if onSync != nil && syncErr == nil {
		onSync(last, true)
	}
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("session: close journal: %w", err)
	}
	return nil
}

// discard closes the journal without saving anything more.
func (j *Journal) discard() {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.discardLocked()
}

func (j *Journal) discardLocked() error {
	j.closed = true
	j.pending, j.pendingBytes = nil, 0
	if j.files != nil {
		j.files.drop(j)
	}
	var err error
	if j.f != nil {
		err = j.f.Close()
		j.f = nil
	}
	// Unlocked only once closed: another process may delete it now.
	if j.unhold != nil {
		j.unhold()
		j.unhold = nil
	}
	return err
}

// NotSavedError says that records of a journal could not be written or
// made durable, and why.
type NotSavedError struct {
	// Err is the failed write or sync (a full disk is syscall.ENOSPC).
	Err error
	// Lost reports that records are gone for good: the journal can never
	// be whole again and refuses every further record. Loading the
	// session again continues from what was saved.
	Lost bool
	// Recovered, set by [Turn.Run], reports that the turn stopped because
	// a record could not be written, but the journal was written and
	// synced again when the turn ended: the session saves again.
	Recovered bool
}

func (e *NotSavedError) Error() string {
	switch {
	case e.Lost:
		return "session: records were lost: " + e.Err.Error()
	case e.Recovered:
		return "session: a record could not be saved (" + e.Err.Error() + "); the journal is saved again"
	}
	return "session: not saved: " + e.Err.Error()
}

func (e *NotSavedError) Unwrap() error { return e.Err }

// readRecords reads every record of a journal. size is how many bytes it
// read; clean reports whether the input is empty or ends with a newline,
// that is whether a record appended after it starts on a line of its own.
func readRecords(r io.Reader, logger *slog.Logger) (recs []Record, size int64, clean bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	clean = true
	var offset int64
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			rec, ok, blank := parseRecord(line)
			switch {
			case ok:
				recs = append(recs, rec)
			case blank:
			case complete:
				logger.Warn("skipping corrupt journal line", "line", lineNo, "offset", offset, "bytes", len(line))
			default:
				logger.Warn("skipping torn last journal line", "line", lineNo, "offset", offset, "bytes", len(line))
			}
			clean = complete
			offset += int64(len(line))
		}
		if err == io.EOF {
			return recs, offset, clean, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
	}
}

// parseRecord decodes one line. A line is a record when it is one JSON
// object with a non-empty "k"; a line that holds only white space is
// blank. A whole record missing only its newline counts: no proper prefix
// of a JSON object is itself a JSON object.
func parseRecord(line []byte) (rec Record, ok, blank bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Record{}, false, true
	}
	if line[0] != '{' || json.Unmarshal(line, &rec) != nil || rec.Kind == "" {
		return Record{}, false, false
	}
	return rec, true, false
}
