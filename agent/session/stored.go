// This file opens a session's journal in its store, new or existing,
// before the live session is built over it.

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools/tasks"
)

// KindReset is a journal record holding a whole new conversation (after
// compaction); messages before it are superseded.
const KindReset = "reset"

// Loaded is what a session's journal holds.
type Loaded struct {
	Meta Meta
	// Messages is the conversation, for the agent's history.
	Messages []llm.Message
	// Updates are the recorded session/update params (JSON), in order, for
	// a session/load replay.
	Updates []json.RawMessage
	// State is the last mode, model and title.
	State State
	// Tasks are the background tasks' records, in order.
	Tasks []tasks.Record
}

// Stored is a session's journal, open in its store, and what it holds. It
// becomes a live session's with Config.Stored; until then its owner
// closes it.
type Stored struct {
	Loaded
	store   *Store
	journal *Journal
}

// Close closes the journal of a session that was never built.
func (st *Stored) Close() error { return st.journal.Close() }

// Create starts the journal of a new session in store: meta, then its
// initial state, synced before it returns. A title in state is listed at
// once. A session whose state cannot be saved is not created: nothing of
// it is left in the store.
func Create(store *Store, meta Meta, state State) (*Stored, error) {
	return create(store, meta, state, true)
}

// create is Create; without sync the caller syncs the journal (a fork,
// once it has copied the conversation).
func create(store *Store, meta Meta, state State, sync bool) (*Stored, error) {
	j, err := store.Create(meta)
	if err != nil {
		return nil, err
	}
	err = j.Append(KindState, state)
	if err == nil && sync {
		err = j.Sync()
	}
	if err != nil {
		j.Close()
		_ = store.Delete(meta.SessionID)
		return nil, err
	}
	if state.Title != "" {
		_ = store.SetTitle(meta.SessionID, state.Title)
	}
	return &Stored{Loaded: Loaded{Meta: meta, State: state}, store: store, journal: j}, nil
}

// Load reopens the journal of session id and reads it back: its meta, its
// conversation (repaired when the daemon stopped mid-call), its recorded
// updates and its last state.
func Load(store *Store, id string) (*Stored, error) {
	j, recs, err := store.Open(id)
	if err != nil {
		return nil, err
	}
	return &Stored{Loaded: loaded(recs), store: store, journal: j}, nil
}

// Read reads session id's journal like Load, without opening it for
// writing: a copy of what it holds (session/fork), which may be taken while
// the session is open.
func Read(store *Store, id string) (Loaded, error) {
	if err := checkID(id); err != nil {
		return Loaded{}, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	f, err := os.Open(JournalPath(store.dir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return Loaded{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Loaded{}, fmt.Errorf("session: open journal: %w", err)
	}
	defer f.Close()
	recs, _, _, err := readRecords(f, store.logger)
	if err != nil {
		return Loaded{}, fmt.Errorf("session: read journal: %w", err)
	}
	return loaded(recs), nil
}

// CreateFork starts the journal of a new session that continues another
// one's conversation: meta and state as [Create] writes them, then the
// conversation so far as one reset record, then the updates a load of the
// new session replays (already carrying its id), synced before it
// returns. The copy makes the new journal whole on its own: deleting or
// compacting the original later changes nothing of it. A fork whose
// journal would start at or above the journal bound could take no prompt:
// it is not made, and the error is a [*LimitError] (the copy stops, and is
// removed, as soon as it reaches the bound).
func CreateFork(store *Store, meta Meta, state State, msgs []llm.Message, updates []json.RawMessage) (*Stored, error) {
	// The updates alone may say so already: nothing is written then.
	var least int64
	for _, u := range updates {
		least += int64(len(u))
	}
	if err := store.refuseFork(meta.SessionID, least); err != nil {
		return nil, err
	}
	st, err := create(store, meta, state, false)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Stored, error) {
		st.Close()
		_ = store.Delete(meta.SessionID)
		return nil, err
	}
	if len(msgs) > 0 {
		if err := st.journal.Append(KindReset, msgs); err != nil {
			return fail(err)
		}
	}
	if err := store.refuseFork(meta.SessionID, st.journal.Size()); err != nil {
		return fail(err)
	}
	for _, u := range updates {
		if err := st.journal.Append(KindUpdate, u); err != nil {
			return fail(err)
		}
		if err := store.refuseFork(meta.SessionID, st.journal.Size()); err != nil {
			return fail(err)
		}
	}
	if err := st.journal.Sync(); err != nil {
		return fail(err)
	}
	st.Messages, st.Updates = msgs, updates
	return st, nil
}

// loaded interprets a journal's records.
func loaded(recs []Record) Loaded {
	ld := Loaded{}
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
		case KindTask, KindTaskOutput, KindTaskSeen:
			ld.Tasks = append(ld.Tasks, tasks.Record{Kind: r.Kind, Data: r.Data})
		}
	}
	ld.Messages = repairHistory(ld.Messages)
	return ld
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
