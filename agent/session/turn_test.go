// This file tests that a turn is acknowledged only once it is durable: a
// turn whose records cannot be written or synced fails with a
// NotSavedError, a session that cannot save refuses new turns, and once
// space returns every acknowledged turn loads.

package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/internal/testkit"
)

// faultySession builds a recorded session over a store whose journal
// files fail on fl's word (see hangSession).
func faultySession(t *testing.T, fl *faults) (*Session, *Store) {
	t.Helper()
	s, store := hangSession(t, &StoreOptions{open: fl.open}, nil)
	t.Cleanup(func() { s.Close() })
	return s, store
}

// hangSession builds a recorded session over a store made with opts,
// whose model answers "hang" by streaming and then waiting to be
// cancelled, anything else at once; ending is its endingTurn hook (nil:
// none).
func hangSession(t *testing.T, opts *StoreOptions, ending func()) (*Session, *Store) {
	t.Helper()
	store, err := NewStore(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return hangSessionIn(t, store, ending), store
}

// hangSessionIn is hangSession's session in store.
func hangSessionIn(t *testing.T, store *Store, ending func()) *Session {
	t.Helper()
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{User: "hang", Text: "working", Hang: true},
		{Text: "done: {{user}}"},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	stored, err := Create(store, Meta{SessionID: "s1", Cwd: cwd}, State{Mode: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: model, Stored: stored, endingTurn: ending})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runTurn runs one turn of text under the guard.
func runTurn(t *testing.T, s *Session, text string) (agent.Result, error) {
	t.Helper()
	turn, err := s.BeginTurn(context.Background())
	if err != nil {
		return agent.Result{}, err
	}
	defer turn.Finish()
	type out struct {
		res agent.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := turn.Run(agent.Input{Text: text}, func(agent.Event) {})
		done <- out{res, err}
	}()
	o := testkit.Await(t, done, fmt.Sprintf("the turn %q to end", text))
	return o.res, o.err
}

// loadedUsers returns the user messages a fresh load of the session has.
func loadedUsers(t *testing.T, store *Store) []string {
	t.Helper()
	st, err := Read(store, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range st.Messages {
		if m.Role == llm.RoleUser {
			users = append(users, m.Content)
		}
	}
	return users
}

func wantTurnNotSaved(t *testing.T, what string, err error, recovered bool) {
	t.Helper()
	var ns *NotSavedError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) || ns.Recovered != recovered {
		t.Fatalf("%s = %v, want a NotSavedError for ENOSPC (recovered %v)", what, err, recovered)
	}
}

func TestTurnIsAcknowledgedOnlyWhenDurable(t *testing.T) {
	t.Run("a turn whose records cannot be written stops and fails; the session refuses turns until space returns, then every acknowledged turn loads", func(t *testing.T) {
		fl := &faults{}
		s, store := faultySession(t, fl)
		if res, err := runTurn(t, s, "first"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("first turn: %+v, %v", res, err)
		}
		fl.set(syscall.ENOSPC, nil)
		// The model would wait for ever: only the failed write stops it.
		_, err := runTurn(t, s, "hang on a full disk")
		wantTurnNotSaved(t, "a turn on a full disk", err, false)
		_, err = runTurn(t, s, "refused")
		wantTurnNotSaved(t, "the next BeginTurn", err, false)
		fl.set(nil, nil)
		if res, err := runTurn(t, s, "after space returned"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("the turn once space returned: %+v, %v", res, err)
		}
		got := strings.Join(loadedUsers(t, store), " | ")
		if got != "first | hang on a full disk | after space returned" {
			t.Fatalf("a load has the user messages %q", got)
		}
	})

	t.Run("a turn whose final sync fails is not acknowledged, and its records are written again before the next turn", func(t *testing.T) {
		fl := &faults{}
		s, store := faultySession(t, fl)
		fl.set(nil, syscall.ENOSPC)
		_, err := runTurn(t, s, "synced on a failing disk")
		wantTurnNotSaved(t, "the turn", err, false)
		fl.set(nil, nil)
		if res, err := runTurn(t, s, "next"); err != nil || res.StopReason != agent.StopEndTurn {
			t.Fatalf("the next turn: %+v, %v", res, err)
		}
		if got := strings.Join(loadedUsers(t, store), " | "); got != "synced on a failing disk | next" {
			t.Fatalf("a load has the user messages %q", got)
		}
	})

	t.Run("a turn stopped by a failed write whose records are written by its end says the session saves again", func(t *testing.T) {
		fl := &faults{}
		s, _ := faultySession(t, fl)
		turn, err := s.BeginTurn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer turn.Finish()
		done := make(chan error, 1)
		go func() {
			_, err := turn.Run(agent.Input{Text: "hang"}, func(agent.Event) {})
			done <- err
		}()
		// One write fails (this update's, or one the turn made just
		// before): that stops the hanging turn, and the space is back for
		// the turn's final sync.
		fl.mu.Lock()
		fl.failNext = 1
		fl.mu.Unlock()
		if err := s.RecordUpdate([]byte(`{"update":"x"}`)); err == nil {
			t.Fatal("RecordUpdate on a full disk succeeded")
		}
		wantTurnNotSaved(t, "the turn", testkit.Await(t, done, "the failed write to stop the turn"), true)
		if err := s.stored.journal.Err(); err != nil {
			t.Fatalf("the journal after the turn: %v", err)
		}
	})
}
