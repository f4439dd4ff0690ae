//go:build linux

package session

import (
	"fmt"
	"os"
	"testing"
)

// openFiles counts this process's open descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(fds)
}

// TestIdleJournalsHoldNoDescriptor guards the daemon's descriptors: a
// journal keeps its file open only between an Append and the Sync that
// makes it durable, and at most maxOpenJournals do (issue 10, finding 2:
// 501 idle sessions made accept fail with EMFILE).
func TestIdleJournalsHoldNoDescriptor(t *testing.T) {
	dir := t.TempDir()
	before := openFiles(t)
	var js []*Journal
	for i := range 100 {
		j, err := CreateJournal(dir, fmt.Sprintf("s%d", i), map[string]int{"n": i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, j)
	}
	if n := openFiles(t) - before; n > 0 {
		t.Errorf("100 created journals hold %d descriptors, want 0", n)
	}
	for _, j := range js {
		if err := j.Append(KindUpdate, "a turn"); err != nil {
			t.Fatal(err)
		}
	}
	// The most recently written keep their file until they sync; the
	// others were closed and reopen to sync.
	if n := openFiles(t) - before; n != maxOpenJournals {
		t.Errorf("100 journals with unsynced records hold %d descriptors, want %d", n, maxOpenJournals)
	}
	for _, j := range js {
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if n := openFiles(t) - before; n > 0 {
		t.Errorf("100 synced journals hold %d descriptors, want 0", n)
	}
	// Reopened journals hold none either, and keep every record.
	for i, j := range js {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		j2, recs, err := OpenJournal(dir, fmt.Sprintf("s%d", i), nil)
		if err != nil || len(recs) != 2 {
			t.Fatalf("reopen: %d records, %v", len(recs), err)
		}
		js[i] = j2
	}
	if n := openFiles(t) - before; n > 0 {
		t.Errorf("100 reopened journals hold %d descriptors, want 0", n)
	}
	for _, j := range js {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
