// This file tests closing a session while its cancelled turn is ending,
// as a daemon's shutdown does: the close waits for the turn's end to be
// saved and its answer given, and only then closes the journal.

package session

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm/scripted"
)

func TestCloseWhileCancelledTurnEndsWaitsForItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, err := NewStore(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{User: "hang", Text: "working", Hang: true}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cwd := t.TempDir()
		stored, err := Create(store, Meta{SessionID: "s1", Cwd: cwd}, State{Mode: "ask"})
		if err != nil {
			t.Fatal(err)
		}
		var s *Session
		closed := make(chan error, 1)
		var answered, closedEarly atomic.Bool
		// The shutdown's Close arrives when the cancelled turn's work
		// has returned and its end is not saved yet; the hook returns
		// once that Close either returned or waits for the turn.
		ending := func() {
			go func() {
				err := s.Close()
				if !answered.Load() {
					closedEarly.Store(true)
				}
				closed <- err
			}()
			synctest.Wait()
		}
		s, err = New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: model, Stored: stored, endingTurn: ending})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.BeginTurn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		type out struct {
			res agent.Result
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := turn.Run(agent.Input{Text: "hang"}, func(agent.Event) {})
			done <- out{res, err}
		}()
		synctest.Wait() // the model streamed and hangs until cancelled
		s.Cancel()      // the shutdown cancels every turn first
		o := <-done
		if o.err != nil {
			t.Fatalf("the cancelled turn's answer is the error %q, want stop reason cancelled", o.err)
		}
		if o.res.StopReason != agent.StopCancelled {
			t.Fatalf("stop reason %q, want cancelled", o.res.StopReason)
		}
		answered.Store(true)
		turn.Finish()
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		if closedEarly.Load() {
			t.Fatal("Close returned before the turn's answer was given")
		}
		if users := loadedUsers(t, store); len(users) != 1 || users[0] != "hang" {
			t.Fatalf("the reloaded session has user messages %q, want the cancelled prompt", users)
		}
	})
}
