// This file tests that two stores of one directory in one process see
// each other's open sessions: on Linux a lock belongs to the open file
// description, so they conflict as two processes do (elsewhere POSIX
// locks belong to the process, and the end-to-end tests of cmd/dshd
// cover two processes).

package session

import (
	"errors"
	"testing"
)

func TestAnotherStoreNeitherOpensNorDeletesAnOpenSession(t *testing.T) {
	a := newStore(t, nil)
	b, err := NewStore(a.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := a.Create(Meta{SessionID: "s", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Open("s"); !errors.Is(err, ErrHeld) {
		t.Fatalf("Open in another store = %v, want ErrHeld", err)
	}
	if err := b.Delete("s"); !errors.Is(err, ErrHeld) || !b.Exists("s") {
		t.Fatalf("Delete in another store = %v, want ErrHeld and the session kept", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed, the lock is gone.
	jb, _, err := b.Open("s")
	if err != nil {
		t.Fatalf("Open once the first store closed it: %v", err)
	}
	if _, _, err := a.Open("s"); !errors.Is(err, ErrHeld) {
		t.Fatalf("Open in the first store now = %v, want ErrHeld", err)
	}
	jb.Close()
	if err := a.Delete("s"); err != nil || a.Exists("s") {
		t.Fatalf("Delete once no store has it open = %v", err)
	}
}
