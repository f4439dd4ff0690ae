// This file tests the workspaces being filled (checkouts under way): they
// hold the state bound together, a refused one stops counting for the
// others, and a count of the directory meanwhile counts each once.

package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fillWorkspace writes n bytes into session id's workspace, as a clone
// does.
func fillWorkspace(t *testing.T, store *Store, id string, n int) {
	t.Helper()
	dir := store.WorkspaceDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack"), make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspacesBeingFilledHoldTheStateBoundTogetherAndAreCountedOnce(t *testing.T) {
	dir := t.TempDir()
	const limit = 64 << 10
	opts, logs := limitsStore(t, DiskLimits{MaxStateBytes: limit, Settings: DiskSettings{MaxStateBytes: "--max-state-bytes"}}, nil)
	store, err := NewStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := store.BeginWorkspace(id); err != nil {
			t.Fatal(err)
		}
		fillWorkspace(t, store, id, 40<<10)
	}
	if err := store.CheckWorkspace("a"); err != nil {
		t.Fatalf("one 40 KiB workspace under a 64 KiB bound: %v", err)
	}
	var le *LimitError
	if err := store.CheckWorkspace("b"); !errors.As(err, &le) || le.Setting != "--max-state-bytes" || le.Held != 80<<10 {
		t.Fatalf("a second 40 KiB workspace with the first under way answered %v, want the bound with 80 KiB held", err)
	}
	// The refused one is being removed: it no longer refuses the other.
	if err := store.CheckWorkspace("a"); err != nil {
		t.Fatalf("the first workspace, with the refused one about to go: %v", err)
	}
	// A count of the directory meanwhile (at the bound, after another
	// process created or removed a file) leaves the workspaces under way
	// to their checks: counted there too, the first would hold 80 KiB.
	if err := os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	store.recountIfChanged()
	if got := store.stateBytes.Load(); got != 1 {
		t.Fatalf("a count with two workspaces under way counts %d bytes, want only the 1 of the other journal", got)
	}
	if err := store.CheckWorkspace("a"); err != nil {
		t.Fatalf("the first workspace after a count of the directory: %v", err)
	}
	if err := store.DropWorkspace("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.WorkspaceDir("b")); !os.IsNotExist(err) {
		t.Fatalf("the dropped workspace is still there: %v", err)
	}
	if err := store.CountWorkspace("a"); err != nil {
		t.Fatal(err)
	}
	if got := store.stateBytes.Load(); got != 1+40<<10 {
		t.Fatalf("with the first workspace counted the store counts %d bytes, want %d", got, 1+40<<10)
	}
	// Counted, it is the sessions', and counted once by the next count.
	if err := os.Remove(filepath.Join(dir, "other.jsonl")); err != nil {
		t.Fatal(err)
	}
	store.recountIfChanged()
	if got := store.stateBytes.Load(); got != 40<<10 {
		t.Fatalf("a count of the directory counts %d bytes, want the workspace's %d", got, 40<<10)
	}
	// Counted, it holds the bound with the next workspace.
	if err := store.BeginWorkspace("c"); err != nil {
		t.Fatal(err)
	}
	fillWorkspace(t, store, "c", 24<<10)
	if err := store.CheckWorkspace("c"); !errors.As(err, &le) {
		t.Fatalf("a 24 KiB workspace with 40 KiB counted under a 64 KiB bound: %v", err)
	}
	if err := store.DropWorkspace("c"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), LogWorkspaceBound); n != 1 {
		t.Fatalf("the refusals were logged %d times, want once:\n%s", n, logs)
	}
}
