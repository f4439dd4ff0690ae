// End-to-end test of `dshd sessions delete` on what is not a whole
// session: a directory where a journal would be is refused and left, and an
// index entry without a journal (which `sessions list` warns about) is
// removed.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionsDeleteRefusesWhatIsNotAJournalAndRemovesAnIndexEntryWithout(t *testing.T) {
	state := t.TempDir()
	sessions := filepath.Join(state, "sessions")
	dir := filepath.Join(sessions, "s_dir.jsonl")
	orphan := filepath.Join(sessions, "s_orphan.json")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The warning says how to remove the entry.
	if code, _, stderr := sessionsCmd(t, state, "list"); code != 0 || !strings.Contains(stderr, "s_orphan") || !strings.Contains(stderr, "dshd sessions delete s_orphan") {
		t.Fatalf("list: exit %d, want 0 and a warning naming s_orphan and how to remove it; stderr:\n%s", code, stderr)
	}

	// The directory is refused, named; the other id named is deleted all
	// the same.
	code, _, stderr := sessionsCmd(t, state, "delete", "s_dir", "s_orphan")
	if code != 1 || !containsAll(stderr, dir, "directory", "nothing of s_dir was deleted", "deleted s_orphan", orphan, "no journal") || strings.Contains(stderr, "deleted s_dir") {
		t.Fatalf("delete of a directory named like a journal and of an index entry without a journal: exit %d; stderr:\n%s", code, stderr)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory is gone: %v", err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the index entry is still there: %v", err)
	}
	if code, _, stderr := sessionsCmd(t, state, "list"); code != 0 || strings.Contains(stderr, "s_orphan") {
		t.Fatalf("list after the delete: exit %d, still warning of s_orphan; stderr:\n%s", code, stderr)
	}
	if code, _, stderr := sessionsCmd(t, state, "delete", "s_orphan"); code != 1 || !strings.Contains(stderr, "no session s_orphan") {
		t.Fatalf("a second delete: exit %d; stderr:\n%s", code, stderr)
	}
}
