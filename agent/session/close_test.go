// This file tests closing a session while its turn is ending, as a
// daemon's shutdown does: the close waits for the turn's end to be saved
// and its answer given, and only then closes the journal.

package session

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dshd/dshd/agent"
)

type turnOut struct {
	res agent.Result
	err error
}

// startTurn begins a turn of text and runs it on its own goroutine.
func startTurn(t *testing.T, s *Session, text string) (*Turn, <-chan turnOut) {
	t.Helper()
	turn, err := s.BeginTurn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan turnOut, 1)
	go func() {
		res, err := turn.Run(agent.Input{Text: text}, func(agent.Event) {})
		done <- turnOut{res, err}
	}()
	return turn, done
}

func TestCloseWhileCancelledTurnEndsWaitsForItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		s, store := hangSession(t, nil, ending)
		turn, done := startTurn(t, s, "hang")
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

func TestCloseAfterTurnEndedWaitsForItsAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, store := hangSession(t, nil, nil)
		turn, done := startTurn(t, s, "hello")
		if o := <-done; o.err != nil || o.res.StopReason != agent.StopEndTurn {
			t.Fatalf("the turn ended with %q, %v; want end_turn", o.res.StopReason, o.err)
		}
		// The turn's end is saved, its answer is not given yet: a Close
		// now must wait for it.
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) before the turn's answer was given", err)
		default:
		}
		turn.Finish()
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		if users := loadedUsers(t, store); len(users) != 1 || users[0] != "hello" {
			t.Fatalf("the reloaded session has user messages %q, want the prompt", users)
		}
	})
}
