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
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
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
	// Logger receives warnings about skipped lines; nil discards them.
	Logger *slog.Logger
	// Now stamps appended records; nil means time.Now.
	Now func() time.Time
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

// Journal is an open session journal. Its methods are safe for concurrent
// use. It holds its file open only from an Append to the Sync that makes
// it durable, and only while it is among the maxOpenJournals most
// recently written (files.go), so idle sessions hold no descriptor.
type Journal struct {
	id     string
	path   string
	now    func() time.Time
	logger *slog.Logger
	// onSync, set by a Store, learns the time of the last record each time
	// appended records become durable.
	onSync func(last time.Time, closing bool)

	mu     sync.Mutex
	f      *os.File // open while records await a Sync; nil otherwise
	closed bool
	// deleted is set when reopening found the file gone (Store.Delete):
	// records then go nowhere, as they went to the unlinked file when the
	// journal kept it open.
	deleted bool
	elem    *list.Element // in openJournals while f is open; under its lock
	// freshLine is set while the file does not end with a newline (a torn
	// last line, or a failed write): the next record starts with one.
	freshLine bool
	unsynced  bool
	last      time.Time
	buf       []byte
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %q", ErrExists, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: create journal: %w", err)
	}
	j := newJournal(id, path, f, opts)
	err = j.Append(KindMeta, meta)
	if err == nil {
		err = j.Sync()
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		j.Close()
		os.Remove(path)
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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session: open journal: %w", err)
	}
	j := newJournal(id, path, nil, opts)
	recs, clean, err := readRecords(f, j.logger)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("session: read journal: %w", err)
	}
	j.freshLine = !clean
	if n := len(recs); n > 0 {
		j.last = recs[n-1].Time
	}
	return j, recs, nil
}

func newJournal(id, path string, f *os.File, opts *JournalOptions) *Journal {
	return &Journal{
		id:     id,
		path:   path,
		f:      f,
		now:    opts.now(),
		logger: opts.logger().With("session", id),
	}
}

// ID returns the session id.
func (j *Journal) ID() string { return j.id }

// Path returns the journal's file.
func (j *Journal) Path() string { return j.path }

// Append adds a record of kind with data marshalled to JSON, stamped with
// the current time. The record reaches the file (the OS, not yet the disk)
// with one write of one whole line before Append returns, so it survives
// the process being killed; [Journal.Sync] makes it survive the machine.
func (j *Journal) Append(kind string, data any) error {
	if kind == "" {
		return errors.New("session: append: empty record kind")
	}
	// data is encoded straight into the record below (already encoded
	// JSON, an update from the connection's encoder, is only compacted),
	// so a large record is not copied twice.
	pre, isRaw := data.(json.RawMessage)
	isRaw = isRaw && len(pre) > 0
	var err error
	k, _ := json.Marshal(kind) // a string always marshals
	now := j.now().UTC()

	var victims []*Journal
	defer func() { evict(victims) }() // after the unlock below
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	if victims, err = j.file(); err != nil {
		return fmt.Errorf("session: append %s: reopen the journal: %w", kind, err)
	}
	if j.deleted {
		return nil
	}
	b := j.buf[:0]
	if j.freshLine {
		b = append(b, '\n')
	}
	b = append(b, `{"k":`...)
	b = append(b, k...)
	if !now.IsZero() {
		b = append(b, `,"t":"`...)
		b, err = now.AppendText(b)
		if err != nil {
			return fmt.Errorf("session: append %s: %w", kind, err)
		}
		b = append(b, '"')
	}
	b = append(b, `,"d":`...)
	w := bytes.NewBuffer(b)
	if isRaw {
		err = json.Compact(w, pre)
	} else if err = json.NewEncoder(w).Encode(data); err == nil {
		w.Truncate(w.Len() - 1) // Encode writes json.Marshal's bytes and a newline
	}
	if err != nil {
		return fmt.Errorf("session: append %s: %w", kind, err)
	}
	b = append(w.Bytes(), "}\n"...)
	j.buf = b

	n, err := j.f.Write(b)
	if cap(b) > 64<<10 {
		j.buf = nil // a huge record's buffer is not kept for the session's life
	}
	if n > 0 {
		j.unsynced = true
		// A short write leaves a torn line: start the next one afresh.
		j.freshLine = b[n-1] != '\n'
	}
	if err != nil {
		return fmt.Errorf("session: append %s: %w", kind, err)
	}
	j.last = now
	return nil
}

// Sync makes every record appended so far durable (fsync). It is cheap
// when nothing was appended since the last Sync.
func (j *Journal) Sync() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return ErrClosed
	}
	if !j.unsynced || j.deleted {
		j.park()
		j.mu.Unlock()
		return nil
	}
	err := j.reopen()
	if err == nil {
		err = datasync(j.f)
	}
	if err == nil {
		j.unsynced = false
		j.park()
	}
	last, onSync := j.last, j.onSync
	j.mu.Unlock()
	if err != nil {
		return fmt.Errorf("session: sync journal: %w", err)
	}
	if onSync != nil {
		onSync(last, false)
	}
	return nil
}

// reopen opens the file of an evicted journal to sync it; under j.mu. A
// failed sync keeps the file open, so the next Sync retries on it.
func (j *Journal) reopen() error {
	if j.f != nil {
		return nil
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	j.f = f
	return nil
}

// Close syncs and closes the journal. Closing again returns nil.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	var syncErr, closeErr error
	synced := false
	if j.unsynced && !j.deleted {
		if syncErr = j.reopen(); syncErr == nil {
			syncErr = j.f.Sync()
		}
		synced = syncErr == nil
	}
	openJournals.forget(j)
	if j.f != nil {
		closeErr = j.f.Close()
		j.f = nil
	}
	last, onSync := j.last, j.onSync
	j.mu.Unlock()
	if onSync != nil && (synced || syncErr == nil) {
		onSync(last, true)
	}
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("session: close journal: %w", err)
	}
	return nil
}

// readRecords reads every record of a journal. clean reports whether the
// input is empty or ends with a newline, that is whether a record appended
// after it starts on a line of its own.
func readRecords(r io.Reader, logger *slog.Logger) (recs []Record, clean bool, err error) {
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
			return recs, clean, nil
		}
		if err != nil {
			return nil, false, err
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

// syncDir makes a directory's entries (a new or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
