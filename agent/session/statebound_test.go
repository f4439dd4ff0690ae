// This file tests the bound of all sessions in the store's directory: the
// store counts what the directory held at start and what it writes and
// deletes, and at the bound no turn runs and no journal is created, the
// refusal logged once and the recovery too.

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/scripted"
)

// dirBytes is what the journals and sidecars in dir hold on disk.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".json") {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}

func TestTheStoreCountsItsDirectoryAndAtTheStateBoundNoTurnRunsAndNoJournalIsCreated(t *testing.T) {
	dir := t.TempDir()
	// What an earlier daemon left: counted from the start. Other files
	// are not sessions.
	for name, size := range map[string]int{"old.jsonl": 3000, "old.json": 100, "notes.txt": 50000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const limit = 3100 + 12<<10
	opts, logs := limitsStore(t, DiskLimits{MaxStateBytes: limit, StateSetting: "--max-state-bytes"}, nil)
	store, err := NewStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := store.stateBytes.Load(); got != 3100 {
		t.Fatalf("a store over a directory holding 3100 bytes of sessions counts %d", got)
	}
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{Text: "done: {{user}}"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	stored, err := Create(store, Meta{SessionID: "s1", Cwd: cwd}, State{Mode: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: model, Stored: stored})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	var refused *LimitError
	turns := 0
	for ; turns < 100 && refused == nil; turns++ {
		before := dirBytes(t, dir)
		_, err := runTurn(t, s, fmt.Sprintf("turn %d %s", turns, strings.Repeat("p", 1000)))
		if got := store.stateBytes.Load(); got != dirBytes(t, dir) {
			t.Fatalf("after turn %d the store counts %d bytes, the directory holds %d", turns, got, dirBytes(t, dir))
		}
		if errors.As(err, &refused) {
			if before < limit {
				t.Fatalf("turn %d was refused with %d bytes in the directory, under the bound %d", turns, before, limit)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if refused == nil {
		t.Fatalf("%d turns ran under a bound of %d bytes; the directory holds %d", turns, limit, dirBytes(t, dir))
	}
	if turns < 2 {
		t.Fatalf("turn %d was refused already; the test needs turns that fit", turns)
	}
	held := dirBytes(t, dir)
	if refused.Setting != "--max-state-bytes" || refused.Limit != limit || refused.Sessions != store.Dir() || refused.Held != held || refused.SessionID != "s1" {
		t.Fatalf("the refusal is %+v, want the setting, the directory and its %d bytes", refused, held)
	}
	if msg := refused.Error(); !strings.Contains(msg, store.Dir()) || !strings.Contains(msg, fmt.Sprintf("--max-state-bytes (%d)", limit)) || !strings.Contains(msg, "dshd sessions delete") {
		t.Fatalf("the refusal says %q", msg)
	}
	var le *LimitError
	if _, err := runTurn(t, s, "again"); !errors.As(err, &le) {
		t.Fatalf("a second turn at the bound: %v", err)
	}
	if err := s.SetMode("yolo"); !errors.As(err, &le) {
		t.Fatalf("a mode change at the bound: %v", err)
	}
	if _, err := Create(store, Meta{SessionID: "s2", Cwd: cwd}, State{}); !errors.As(err, &le) || le.SessionID != "s2" {
		t.Fatalf("a new session at the bound: %v", err)
	}
	if store.Exists("s2") {
		t.Fatal("the refused session has a journal")
	}
	if got := dirBytes(t, dir); got != held {
		t.Fatalf("the refusals changed the directory from %d to %d bytes", held, got)
	}
	if n := strings.Count(logs.String(), LogStateBound); n != 1 {
		t.Fatalf("four refusals logged %d times, want once:\n%s", n, logs)
	}

	// Deleting what the earlier daemon left takes its bytes off.
	if err := store.Delete("old"); err != nil {
		t.Fatal(err)
	}
	if got, want := store.stateBytes.Load(), held-3100; got != want {
		t.Fatalf("after a delete the store counts %d bytes, want %d", got, want)
	}
	if _, err := runTurn(t, s, "with room again"); err != nil {
		t.Fatalf("a turn after a delete took the directory under the bound: %v", err)
	}
	if !strings.Contains(logs.String(), "below the bound again") {
		t.Fatalf("the recovery was not logged:\n%s", logs)
	}
	s.Close()
	if got := store.stateBytes.Load(); got != dirBytes(t, dir) {
		t.Fatalf("after the close the store counts %d bytes, the directory holds %d", got, dirBytes(t, dir))
	}
}
