// This file implements the live session: what it owns (its agent, tool
// layer, permission policy, environment and journal), its state (mode,
// model, title) and its lifetime. Its turns are in turn.go.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/tasks"
)

// ErrNoPolicy is returned by SetMode on a session whose permission gate
// was given (a subagent child's follows its parent's).
var ErrNoPolicy = errors.New("session: the session has no permission policy of its own")

// State is the part of a session that survives a restart besides its
// conversation: its permission mode, model and title. Zero fields are
// unchanged in a state record.
type State struct {
	Mode  string `json:"mode,omitempty"`
	Model string `json:"model,omitempty"`
	Title string `json:"title,omitempty"`
	// Thinking is "on" or "off" once the session chose; "" is the
	// backend's setting.
	Thinking string `json:"thinking,omitempty"`
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
	if o.Thinking != "" {
		s.Thinking = o.Thinking
	}
}

// ThinkingValue is the State's Thinking of a setting: "on", "off", or ""
// for nil (the backend's).
func ThinkingValue(on *bool) string {
	switch {
	case on == nil:
		return ""
	case *on:
		return "on"
	}
	return "off"
}

// ThinkingOf reads a State's Thinking: nil for the backend's setting.
func ThinkingOf(v string) *bool {
	switch v {
	case "on":
		on := true
		return &on
	case "off":
		off := false
		return &off
	}
	return nil
}

// Session is one live conversation. It owns its agent, its tool layer, its
// permission policy (or a child's gate), its tools' environment and, when
// recorded, its journal. Build one with [New]; its methods are safe for
// concurrent use.
type Session struct {
	id     string
	cfg    Config // as built: what a child inherits (ChildConfig)
	log    *slog.Logger
	stored *Stored // nil: nothing is recorded

	agent    *agent.Agent
	reg      *tools.Registry
	offered  agent.ToolSet // reg as the agent sees it (OfferedTools)
	env      *tools.Env
	policy   *permission.Policy // nil when the gate was given
	gate     tools.Permission
	closeMCP func()
	warnings []string
	system   func(context.Context) (string, error) // SystemPrompt's

	instructions projectInstructions
	lastSystem   renderedSystem
	titled       atomic.Bool
	tasks        *tasks.Set
	// outputLeftOut is set while running tasks' output is not recorded
	// (see outputHeld), relayLeftOut while relayed updates are not
	// (RecordRelayed).
	outputLeftOut, relayLeftOut atomic.Bool

	// changing orders the changes of mode, model and thinking with their
	// records (see change).
	changing sync.Mutex

	mu   sync.Mutex
	turn *Turn
	// answering is the last turn begun until its answer reached the
	// client (Finish): it stops being the running turn once its end is
	// saved, but Close still waits for its answer.
	answering *Turn
	closed    bool
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Agent returns the session's agent.
func (s *Session) Agent() *agent.Agent { return s.agent }

// Tools returns the session's tool set: Config.Tools, under a layer of the
// session's own when it connected MCP servers.
func (s *Session) Tools() *tools.Registry { return s.reg }

// OfferedTools returns the tools the session's agent is offered: Tools
// with the task tools, as the session's Delegation leaves them (none that
// delegate when the depth limit is 0).
func (s *Session) OfferedTools() []tools.Tool { return s.offered.Tools() }

// Env returns the environment the session's tools run in.
func (s *Session) Env() *tools.Env { return s.env }

// Cwd returns the session's working directory.
func (s *Session) Cwd() string { return s.cfg.Cwd }

// AdditionalDirectories returns the session's other roots.
func (s *Session) AdditionalDirectories() []string { return s.cfg.AdditionalDirectories }

// MCPServers returns the session's MCP server entries (ACP JSON).
func (s *Session) MCPServers() json.RawMessage { return s.cfg.MCPServers }

// Warnings returns what went wrong while the session was set up (MCP
// servers that could not be used), for the client.
func (s *Session) Warnings() []string { return s.warnings }

// setTitle records the session's title, where Load finds the last one. It
// is a record of the turn that titles the session: one that cannot be
// saved stops that turn, whose answer says so.
func (s *Session) setTitle(title string) {
	if s.stored != nil {
		s.record(KindState, State{Title: title})
	}
}

// change makes a change of the session's state (apply) that st records,
// unless the disk bounds refuse it (see [Session.checkChange]), and only
// once its record is saved: acknowledged means durable, and a change
// (ask to yolo) that a crash could undo must not be answered as made.
// When the journal cannot save, nothing changes, nothing of the record is
// kept, and the error is the journal's [*NotSavedError].
func (s *Session) change(st State, apply func()) error {
	if err := s.checkChange(); err != nil {
		return err
	}
	// Records and changes in one order: the last change made is the last
	// a load finds.
	s.changing.Lock()
	defer s.changing.Unlock()
	if s.stored != nil {
		if err := s.stored.journal.AppendSaved(KindState, st); err != nil {
			s.log.Warn("session state change not saved, so not made", "session", s.id, "change", st, "err", err)
			return err
		}
	}
	apply()
	return nil
}

// Mode returns the permission mode of the session's own policy, or ""
// for a session whose gate was given.
func (s *Session) Mode() permission.Mode {
	if s.policy == nil {
		return ""
	}
	return s.policy.Mode()
}

// SetMode changes the permission mode from the next permission check on,
// once it is saved (see [Session.change]). An unknown mode is an error and
// changes nothing, and so is a change the disk bounds refuse or the
// journal cannot save.
func (s *Session) SetMode(m permission.Mode) error {
	if s.policy == nil {
		return ErrNoPolicy
	}
	if _, err := permission.ParseMode(string(m)); err != nil {
		return err
	}
	return s.change(State{Mode: string(m)}, func() {
		_ = s.policy.SetMode(m) // m parsed above
	})
}

// SetModel changes the model from the next model call on, once it is
// saved (see [Session.change]).
func (s *Session) SetModel(id string) error {
	return s.change(State{Model: id}, func() { s.agent.SetModelID(id) })
}

// Thinking returns the session's thinking setting: nil when it is the
// backend's.
func (s *Session) Thinking() *bool { return s.agent.Thinking() }

// SetThinking turns the model's thinking on or off from the next model
// call on, once it is saved (see [Session.change]).
func (s *Session) SetThinking(on bool) error {
	return s.change(State{Thinking: ThinkingValue(&on)}, func() { s.agent.SetThinking(&on) })
}

// RecordUpdate appends a session/update params object to the journal; a
// session that records nothing drops it. An update that cannot be saved
// stops the running turn (see [Turn.Run]) and returns a
// [*NotSavedError]; the caller sends it all the same, since the turn's
// answer tells the client it was not saved.
func (s *Session) RecordUpdate(params json.RawMessage) error {
	if s.stored == nil {
		return nil
	}
	return s.recorded(s.stored.journal.Append(KindUpdate, params))
}

// RecordRelayed records a session/update params object another agent
// sent (a subagent child's, relayed to the client as its own session) as
// RecordUpdate does, unless the disk bounds refuse a prompt now: it then
// records nothing and returns the [*LimitError]. Nothing of a turn's
// limits bounds such updates (a child sends as many as it likes, a
// background one after its turn), so without this check a child could
// grow the journal past every bound. The running turn, if any, stops with
// that error (Run returns it): whatever it waits for is past the bound.
// The caller relays nothing refused, and cancels the child that sent it.
// The first refusal of each episode is logged, naming the setting.
func (s *Session) RecordRelayed(params json.RawMessage) error {
	if s.stored == nil {
		return nil
	}
	if le := s.heldBack(&s.relayLeftOut, LogRelayHeld, "subagents' updates are recorded again"); le != nil {
		s.stop(func(t *Turn) {
			if t.limited == nil {
				t.limited = le
			}
		})
		return le
	}
	return s.RecordUpdate(params)
}

// stop cancels the running turn, if any, once mark has noted on it why
// (under s.mu): its Run returns that reason.
func (s *Session) stop(mark func(*Turn)) {
	s.mu.Lock()
	t := s.turn
	if t != nil {
		mark(t)
	}
	s.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}

// recorded handles the result of appending a record. A record that cannot
// be saved stops the running turn: it would go on doing work whose record
// nobody could load, and its answer says why it stopped (the journal has
// logged the failure). Other failures (a value that does not marshal) are
// logged.
func (s *Session) recorded(err error) error {
	if err == nil || errors.Is(err, ErrClosed) {
		return err
	}
	// Declared only now: errors.As takes its address, which moves it to the
	// heap, and a record that was saved should not pay for that.
	var ns *NotSavedError
	if !errors.As(err, &ns) {
		s.log.Warn("journal append failed", "session", s.id, "err", err)
		return err
	}
	s.stop(func(t *Turn) {
		if t.notSaved == nil {
			t.notSaved = err
		}
	})
	return err
}

// Tasks returns the session's background tasks.
func (s *Session) Tasks() *tasks.Set { return s.tasks }

// Close cancels the running turn, waits for it to end and for its answer
// (Finish) to reach the client, stops the background tasks still running (interrupted: the session goes away
// without being closed by its client, see [Session.CloseTasks]), closes
// the agent and the MCP connections, and closes the journal. It is
// idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	t := s.answering
	s.mu.Unlock()
	if t != nil {
		t.Cancel()
		<-t.done
	}
	s.tasks.Close(tasks.StateInterrupted)
	s.agent.Close()
	if s.closeMCP != nil {
		s.closeMCP()
	}
	if s.stored == nil {
		return nil
	}
	return s.stored.journal.Close()
}
