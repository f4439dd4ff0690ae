// This file implements a session's turns: one at a time, each ending with
// the journal made durable, and the title a session takes from its first
// prompt.

package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dshd/dshd/agent"
)

// ErrBusy is returned by BeginTurn while a turn is running.
var ErrBusy = errors.New("session: a turn is already in progress")

// ErrSessionClosed is returned by BeginTurn on a closed session.
var ErrSessionClosed = errors.New("session: closed")

// Turn is a prompt turn, from BeginTurn until its answer reached the
// client (Finish).
type Turn struct {
	// Ctx is the turn's context; it ends when the turn is cancelled.
	Ctx        context.Context
	s          *Session
	cancel     context.CancelFunc
	done       chan struct{}
	finishOnce sync.Once
	// notSaved is the first failure to save one of the turn's records,
	// limited the disk bound that stopped the turn (see
	// [Session.RecordRelayed]); both guarded by s.mu.
	notSaved error
	limited  *LimitError
}

// BeginTurn registers a turn whose context derives from parent. A second
// turn while one runs fails with ErrBusy, on a closed session with
// ErrSessionClosed. A session whose journal could not be saved first
// writes and syncs what is missing; while it cannot, BeginTurn fails with
// that [*NotSavedError] and no turn starts: a turn nobody could load
// afterwards is not run, nor is one of a session whose journal file was
// deleted by another process ([ErrJournalGone]). A prompt the store's
// [DiskLimits] refuse fails with a [*LimitError], and no turn starts
// either.
func (s *Session) BeginTurn(parent context.Context) (*Turn, error) {
	if s.stored != nil {
		j := s.stored.journal
		if j.Err() != nil {
			if err := j.Sync(); err != nil {
				return nil, err
			}
		}
		if err := j.checkFile(); err != nil {
			return nil, err
		}
	}
	if err := s.checkDisk(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	if s.turn != nil {
		return nil, ErrBusy
	}
	ctx, cancel := context.WithCancel(parent)
	t := &Turn{Ctx: ctx, s: s, cancel: cancel, done: make(chan struct{})}
	s.turn, s.answering = t, t
	return t, nil
}

// Run runs the turn on the session's agent: in goes to the model, the
// turn's events reach emit in order. When the agent is done the turn ends:
// the journal is synced (once per turn: what the turn recorded is durable
// before its answer) and the session is free for the next turn. A turn
// that failed once it was cancelled ends cancelled, not failed.
//
// Acknowledged means durable: when one of the turn's records could not be
// written (the turn stopped there) or the final sync failed, Run returns
// a [*NotSavedError] instead of a result, Recovered when the sync wrote
// everything after all. A turn stopped by a disk bound (a subagent's
// updates past it, see [Session.RecordRelayed]) returns its
// [*LimitError]; what it recorded until then is saved.
func (t *Turn) Run(in agent.Input, emit func(agent.Event)) (agent.Result, error) {
	return t.Do(func(ctx context.Context, a *agent.Agent) (agent.Result, error) { return a.Prompt(ctx, in, emit) })
}

// Do runs fn as the turn's work in place of a model turn (a slash command
// that acts on the session, such as /compact) and ends the turn as Run
// does.
func (t *Turn) Do(fn func(ctx context.Context, a *agent.Agent) (agent.Result, error)) (agent.Result, error) {
	s := t.s
	res, err := fn(t.Ctx, s.agent)
	cancelled := t.Ctx.Err() != nil
	t.cancel()
	if s.cfg.endingTurn != nil {
		s.cfg.endingTurn()
	}
	// The turn stays the session's until its end is synced: a Close
	// meanwhile (a shutdown) finds it and waits for its answer instead of
	// closing the journal under it.
	var serr error
	if s.stored != nil {
		serr = s.stored.journal.Sync()
	}
	s.mu.Lock()
	if s.turn == t {
		s.turn = nil
	}
	notSaved, limited := t.notSaved, t.limited
	s.mu.Unlock()
	if serr != nil {
		return agent.Result{}, serr
	}
	if notSaved != nil {
		var ns *NotSavedError
		errors.As(notSaved, &ns)
		return agent.Result{}, &NotSavedError{Err: ns.Err, Lost: ns.Lost, Recovered: true}
	}
	if limited != nil {
		return agent.Result{}, limited
	}
	if err != nil && cancelled {
		return agent.Result{StopReason: agent.StopCancelled}, nil
	}
	return res, err
}

// Cancel cancels the turn.
func (t *Turn) Cancel() { t.cancel() }

// Done is closed once the turn has ended and its answer reached the
// client (Finish): whoever waits on it (session/close) must not answer
// before the prompt does.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Finish closes t's Done channel; it is idempotent.
func (t *Turn) Finish() {
	t.finishOnce.Do(func() {
		t.s.mu.Lock()
		if t.s.answering == t {
			t.s.answering = nil
		}
		t.s.mu.Unlock()
		close(t.done)
	})
}

// Running returns the running turn, or nil.
func (s *Session) Running() *Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// Cancel cancels the running turn, if any, and returns it.
func (s *Session) Cancel() *Turn {
	t := s.Running()
	if t != nil {
		t.Cancel()
	}
	return t
}

// maxTitle is the length of a title taken from a first prompt.
const maxTitle = 80

// TitleFromPrompt gives a session without a title one from its first
// prompt's first line (at most maxTitle characters): the first time it is
// called, it records the title in the journal and the store's listing and
// returns it. Every other call, and a prompt without text, returns "".
func (s *Session) TitleFromPrompt(text string) string {
	if !s.titled.CompareAndSwap(false, true) {
		return ""
	}
	title := makeTitle(text)
	if title == "" {
		return ""
	}
	s.setTitle(title)
	if s.stored != nil {
		_ = s.stored.store.SetTitle(s.id, title)
	}
	return title
}

// makeTitle takes a session title from the first prompt's first line.
func makeTitle(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	if utf8.RuneCountInString(text) > maxTitle {
		cut, n := 0, 0 // where the first maxTitle-1 runes end; no []rune of a huge prompt
		for cut = range text {
			if n == maxTitle-1 {
				break
			}
			n++
		}
		text = strings.TrimSpace(text[:cut]) + "…"
	}
	return text
}
