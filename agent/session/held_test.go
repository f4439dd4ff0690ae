// This file tests a journal whose file another process deletes or
// replaces while it is open: it saves nothing more, says so once, and
// brings no file back; and the store's locks: an open session is not
// deleted, and a directory that cannot be locked still works.

package session

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// wantGone checks that err says the journal's file is gone.
func wantGone(t *testing.T, what string, err error) {
	t.Helper()
	var ns *NotSavedError
	if !errors.As(err, &ns) || !ns.Lost || !errors.Is(err, ErrJournalGone) {
		t.Fatalf("%s = %v, want a lost NotSavedError for ErrJournalGone", what, err)
	}
}

func TestAJournalWhoseFileWasDeletedOrReplacedSavesNothingMore(t *testing.T) {
	for _, tc := range []struct {
		name string
		// evicted: another journal took the file descriptor back first.
		evicted bool
		// change deletes or replaces the journal of id in store.
		change func(t *testing.T, s *Store, id string)
	}{
		{"deleted while its file is open", false, forceDelete},
		{"deleted after it gave its file back", true, forceDelete},
		{"replaced while its file is open", false, replaceJournal},
		{"replaced after it gave its file back", true, replaceJournal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testkit.SyncBuffer{}
			s := newStore(t, &StoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil)), OpenJournals: 1})
			j, err := s.Create(Meta{SessionID: "s", Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if err := j.Append(KindUpdate, "saved"); err != nil {
				t.Fatal(err)
			}
			if err := j.Sync(); err != nil {
				t.Fatal(err)
			}
			if tc.evicted {
				mustCreate(t, s, Meta{SessionID: "other", Cwd: "/w"})
			}
			tc.change(t, s, "s")
			before, _ := os.ReadFile(JournalPath(s.Dir(), "s"))

			// The record may reach the file it has open; the sync that
			// would acknowledge it finds the path names another file.
			err = j.Append(KindUpdate, "after")
			if err == nil {
				err = j.Sync()
			}
			wantGone(t, "the first append and sync after", err)
			wantGone(t, "an append after that", j.Append(KindUpdate, "more"))
			wantGone(t, "a sync after that", j.Sync())
			if err := j.Close(); err == nil {
				t.Fatal("Close of a journal whose file is gone said nothing")
			}
			after, _ := os.ReadFile(JournalPath(s.Dir(), "s"))
			if string(after) != string(before) {
				t.Fatalf("the journal's path holds %q, was %q: the gone journal wrote there", after, before)
			}
			if n := strings.Count(logs.String(), "session journal deleted or replaced by another process"); n != 1 {
				t.Fatalf("logged %d times, want once:\n%s", n, logs)
			}
			if strings.Contains(logs.String(), "until it can") {
				t.Fatalf("the log promises the journal will save again:\n%s", logs)
			}
		})
	}
}

// forceDelete deletes session id, which its journal holds open.
func forceDelete(t *testing.T, s *Store, id string) {
	t.Helper()
	held, err := s.ForceDelete(id)
	if err != nil || !held {
		t.Fatalf("ForceDelete = %v, %v; want a session held", held, err)
	}
	if _, err := s.Info(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the sidecar is left: %v", err)
	}
}

// replaceJournal renames another journal over session id's.
func replaceJournal(t *testing.T, s *Store, id string) {
	t.Helper()
	tmp := filepath.Join(s.Dir(), ".replacement")
	if err := os.WriteFile(tmp, []byte(`{"k":"meta","d":{"sessionId":"`+id+`"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, JournalPath(s.Dir(), id)); err != nil {
		t.Fatal(err)
	}
}

func TestASessionWhoseJournalWasDeletedRunsNoTurn(t *testing.T) {
	s, store := hangSession(t, nil, nil)
	t.Cleanup(func() { s.Close() })
	if _, err := runTurn(t, s, "saved"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ForceDelete("s1"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := runTurn(t, s, "not run")
		wantGone(t, "a turn of a deleted session", err)
	}
	if store.Exists("s1") {
		t.Fatal("the refused turns brought the journal back")
	}
}

func TestAStoreThatCannotLockItsDirectoryStillWorks(t *testing.T) {
	dir := t.TempDir()
	// A directory where the lock file should be: it cannot be opened.
	if err := os.Mkdir(filepath.Join(dir, lockName), 0o700); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	s, err := NewStore(dir, &StoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Create(Meta{SessionID: "a", Cwd: "/w"})
	if err != nil {
		t.Fatalf("Create without locks: %v", err)
	}
	mustCreate(t, s, Meta{SessionID: "b", Cwd: "/w"})
	// Its own open session it still knows.
	if err := s.Delete("a"); !errors.Is(err, ErrHeld) {
		t.Fatalf("Delete of a session the store has open = %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.Delete(id); err != nil || s.Exists(id) {
			t.Fatalf("Delete(%s) without locks = %v", id, err)
		}
	}
	if n := strings.Count(logs.String(), "sessions cannot be locked here"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs)
	}
}
