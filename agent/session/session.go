// This file implements the live session: its agent, its turn, its state
// (mode, model, title) and what it writes to its journal.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
)

// ErrBusy is returned by BeginTurn while a turn is running.
var ErrBusy = errors.New("session: a turn is already in progress")

// ErrSessionClosed is returned by BeginTurn on a closed session.
var ErrSessionClosed = errors.New("session: closed")

// KindReset is a journal record holding a whole new conversation (after
// compaction); messages before it are superseded.
const KindReset = "reset"

// State is the part of a session that survives a restart besides its
// conversation: its permission mode, model and title. Zero fields are
// unchanged in a state record.
type State struct {
	Mode  string `json:"mode,omitempty"`
	Model string `json:"model,omitempty"`
	Title string `json:"title,omitempty"`
}

// Loaded is what reopening a session recovered from its journal.
type Loaded struct {
	Meta Meta
	// Messages is the conversation, for the agent's history.
	Messages []llm.Message
	// Updates are the recorded session/update params (JSON), in order, for
	// a session/load replay.
	Updates []json.RawMessage
	// State is the last mode, model and title.
	State State
}

// Session is one conversation: an agent, its journal and its turn. The
// zero value is not usable; create one with New or Open.
type Session struct {
	id      string
	meta    Meta
	journal *Journal

	mu     sync.Mutex
	agent  *agent.Agent
	state  State
	turn   *Turn
	closed bool
}

// Turn is a running prompt turn.
type Turn struct {
	// Ctx is the turn's context; it ends when the turn is cancelled.
	Ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	finishOnce sync.Once
}

// Cancel cancels the turn.
func (t *Turn) Cancel() { t.cancel() }

// Done is closed once the turn has ended.
func (t *Turn) Done() <-chan struct{} { return t.done }

// New creates a session and its journal in store.
func New(store *Store, meta Meta, state State) (*Session, error) {
	j, err := store.Create(meta)
	if err != nil {
		return nil, err
	}
	s := &Session{id: meta.SessionID, meta: meta, journal: j, state: state}
	if err := j.Append(KindState, state); err != nil {
		j.Close()
		return nil, err
	}
	if state.Title != "" {
		_ = store.SetTitle(meta.SessionID, state.Title)
	}
	return s, nil
}

// Open reopens a session from its journal.
func Open(store *Store, id string) (*Session, *Loaded, error) {
	j, recs, err := store.Open(id)
	if err != nil {
		return nil, nil, err
	}
	ld := &Loaded{}
	for _, r := range recs {
		switch r.Kind {
		case KindMeta:
			_ = r.Decode(&ld.Meta)
		case KindMessage:
			var m llm.Message
			if r.Decode(&m) == nil {
				ld.Messages = append(ld.Messages, m)
			}
		case KindReset:
			var msgs []llm.Message
			if r.Decode(&msgs) == nil {
				ld.Messages = msgs
			}
		case KindUpdate:
			ld.Updates = append(ld.Updates, r.Data)
		case KindState:
			var st State
			if r.Decode(&st) == nil {
				ld.State.merge(st)
			}
		}
	}
	ld.Messages = repairHistory(ld.Messages)
	return &Session{id: id, meta: ld.Meta, journal: j, state: ld.State}, ld, nil
}

// repairHistory makes a history valid for a model after a crash: every
// assistant tool call gets an answer right after its message, so the next
// request is accepted.
func repairHistory(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		out = append(out, m)
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		have := map[string]bool{}
		for i+1 < len(msgs) && msgs[i+1].Role == llm.RoleTool {
			i++
			have[msgs[i].ToolCallID] = true
			out = append(out, msgs[i])
		}
		for _, c := range m.ToolCalls {
			if !have[c.ID] {
				out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "The daemon stopped before this tool call finished."})
			}
		}
	}
	return out
}

func (s *State) merge(o State) {
	if o.Mode != "" {
		s.Mode = o.Mode
	}
	if o.Model != "" {
		s.Model = o.Model
	}
	if o.Title != "" {
		s.Title = o.Title
	}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Meta returns what the session was created with.
func (s *Session) Meta() Meta { return s.meta }

// SetAgent attaches the session's agent.
func (s *Session) SetAgent(a *agent.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agent = a
}

// Agent returns the session's agent.
func (s *Session) Agent() *agent.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent
}

// State returns the session's mode, model and title.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// SetState records a change of mode, model or title (zero fields are
// unchanged).
func (s *Session) SetState(st State) error {
	s.mu.Lock()
	s.state.merge(st)
	s.mu.Unlock()
	return s.journal.Append(KindState, st)
}

// BeginTurn starts a turn whose context derives from parent. A second turn
// while one runs fails with ErrBusy.
func (s *Session) BeginTurn(parent context.Context) (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	if s.turn != nil {
		return nil, ErrBusy
	}
	ctx, cancel := context.WithCancel(parent)
	t := &Turn{Ctx: ctx, cancel: cancel, done: make(chan struct{})}
	s.turn = t
	return t, nil
}

// EndTurn makes the journal durable and frees the session for the next
// turn. Done is closed separately, by Finish, once the turn's answer has
// reached the client: whoever waits on Done (session/close) must not
// answer before the prompt does.
func (s *Session) EndTurn(t *Turn) error {
	s.mu.Lock()
	if s.turn == t {
		s.turn = nil
	}
	s.mu.Unlock()
	t.cancel()
	return s.journal.Sync()
}

// Finish closes t's Done channel; it is idempotent.
func (t *Turn) Finish() { t.finishOnce.Do(func() { close(t.done) }) }

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

// RecordUpdate appends a session/update params object to the journal.
func (s *Session) RecordUpdate(params json.RawMessage) error {
	return s.journal.Append(KindUpdate, params)
}

// RecordMessage appends a conversation message to the journal.
func (s *Session) RecordMessage(m llm.Message) error {
	return s.journal.Append(KindMessage, m)
}

// RecordReset appends a whole new conversation (after compaction).
func (s *Session) RecordReset(msgs []llm.Message) error {
	return s.journal.Append(KindReset, msgs)
}

// Sync makes everything recorded so far durable.
func (s *Session) Sync() error { return s.journal.Sync() }

// Close cancels the running turn, waits for it to end, and closes the
// journal. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	t := s.turn
	a := s.agent
	s.mu.Unlock()
	if t != nil {
		t.Cancel()
		<-t.done
	}
	if a != nil {
		a.Close()
	}
	return s.journal.Close()
}
