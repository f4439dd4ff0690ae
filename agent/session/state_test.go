// This file tests that a change of a session's mode, model or thinking is
// made only once its record is saved, on a disk that fails.

package session

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/tools/permission"
)

// loadedState is the state and the user messages a fresh read of session
// s1 of store has, and how many of its lines were skipped as damaged.
func loadedState(t *testing.T, store *Store) (State, string, int) {
	t.Helper()
	j, recs, h := openCounted(t, store.Dir(), "s1")
	j.Close()
	ld := loaded(recs)
	var users []string
	for _, m := range ld.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	return ld.State, strings.Join(users, " | "), h.count()
}

// wantUnchanged fails the test unless none of s's changes to yolo, model
// m2 and thinking off was made.
func wantUnchanged(t *testing.T, s *Session, model string) {
	t.Helper()
	if s.Mode() != permission.ModeAsk || s.Agent().ModelID() != model || s.Thinking() != nil {
		t.Fatalf("after refused changes the session has mode %q, model %q, thinking %v; want ask, %q, the backend's", s.Mode(), s.Agent().ModelID(), s.Thinking(), model)
	}
}

func TestAStateChangeIsMadeOnlyOnceSaved(t *testing.T) {
	changes := func(t *testing.T, s *Session, what string) {
		t.Helper()
		wantTurnNotSaved(t, what+": SetMode", s.SetMode(permission.ModeYolo), false)
		wantTurnNotSaved(t, what+": SetModel", s.SetModel("m2"), false)
		wantTurnNotSaved(t, what+": SetThinking", s.SetThinking(false), false)
	}

	t.Run("a change the journal cannot write is not made, and a load never has it", func(t *testing.T) {
		fl := &faults{}
		s, store := faultySession(t, fl)
		model := s.Agent().ModelID()
		fl.set(syscall.ENOSPC, nil)
		changes(t, s, "on a full disk")
		wantUnchanged(t, s, model)
		fl.set(nil, nil)
		if res, err := runTurn(t, s, "after space returned"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("the turn once space returned: %+v, %v", res, err)
		}
		if st, _, warnings := loadedState(t, store); st.Mode != "ask" || st.Model != "" || st.Thinking != "" || warnings != 0 {
			t.Fatalf("a load has the state %+v (%d damaged lines), want only the mode ask it was created with", st, warnings)
		}
	})

	t.Run("a change whose sync fails is cut off the journal, and what was written before it is saved", func(t *testing.T) {
		fl := &faults{}
		s, store := faultySession(t, fl)
		model := s.Agent().ModelID()
		if err := s.RecordUpdate([]byte(`{"update":"written before"}`)); err != nil {
			t.Fatal(err)
		}
		fl.set(nil, syscall.ENOSPC)
		changes(t, s, "with syncs failing")
		wantUnchanged(t, s, model)
		fl.set(nil, nil)
		if res, err := runTurn(t, s, "once syncs work"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("the turn once syncs work: %+v, %v", res, err)
		}
		st, users, warnings := loadedState(t, store)
		if st.Mode != "ask" || st.Model != "" || st.Thinking != "" || users != "once syncs work" || warnings != 0 {
			t.Fatalf("a load has the state %+v, users %q (%d damaged lines)", st, users, warnings)
		}
		updates, err := s.RecordedUpdates()
		if err != nil || len(updates) == 0 || string(updates[0]) != `{"update":"written before"}` {
			t.Fatalf("the update written before the changes: %q, %v", updates, err)
		}
	})

	t.Run("a change once space returns first saves what the journal held, then is made and loads", func(t *testing.T) {
		fl := &faults{}
		s, store := faultySession(t, fl)
		fl.set(syscall.ENOSPC, nil)
		_, err := runTurn(t, s, "hang on a full disk")
		wantTurnNotSaved(t, "a turn on a full disk", err, false)
		fl.set(nil, nil)
		if err := s.SetMode(permission.ModeYolo); err != nil {
			t.Fatalf("SetMode once space returned = %v", err)
		}
		if err := s.SetThinking(false); err != nil {
			t.Fatalf("SetThinking once space returned = %v", err)
		}
		if s.Mode() != permission.ModeYolo || s.Thinking() == nil || *s.Thinking() {
			t.Fatalf("the changes were not made: mode %q, thinking %v", s.Mode(), s.Thinking())
		}
		st, users, warnings := loadedState(t, store)
		if st.Mode != "yolo" || st.Thinking != "off" || users != "hang on a full disk" || warnings != 0 {
			t.Fatalf("a load has the state %+v, users %q (%d damaged lines)", st, users, warnings)
		}
		if res, err := runTurn(t, s, "next"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("the session saves again, but its next turn: %+v, %v", res, err)
		}
	})
}

func TestASessionWhoseStateCannotBeSavedIsNotCreated(t *testing.T) {
	fl := &faults{}
	store, err := NewStore(t.TempDir(), &StoreOptions{open: fl.open})
	if err != nil {
		t.Fatal(err)
	}
	// The meta record and the sidecar are written (the journal's and the
	// sidecar's writes go through fl alike); the state record's write fails.
	fl.mu.Lock()
	fl.failNth = 3
	fl.mu.Unlock()
	_, err = Create(store, Meta{SessionID: "s1", Cwd: t.TempDir()}, State{Mode: "yolo"})
	wantTurnNotSaved(t, "Create", err, false)
	if store.Exists("s1") {
		t.Fatal("a session whose state could not be saved is left in the store")
	}
	entries, err := os.ReadDir(store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "s1.") {
			t.Fatalf("the refused session left %s", e.Name())
		}
	}
	if _, err := Create(store, Meta{SessionID: "s1", Cwd: t.TempDir()}, State{Mode: "yolo"}); err != nil {
		t.Fatalf("creating the session again once the disk works = %v", err)
	}
}
