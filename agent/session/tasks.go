// This file gives a session its background tasks: the set recorded in the
// session's journal, the task tools bound to it, and its notices handed to
// the agent before each model call.

package session

import (
	"log/slog"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
)

// KindTask and its siblings are the journal records of the tasks.
const (
	KindTask       = tasks.RecordTask
	KindTaskOutput = tasks.RecordOutput
	KindTaskSeen   = tasks.RecordSeen
)

// newTasks builds the session's set: recorded in its journal when it has
// one (a running task's output only while the disk bounds allow, see
// outputHeld), and rebuilt from what the journal holds.
func (s *Session) newTasks(o tasks.Options, log *slog.Logger) *tasks.Set {
	o.Record, o.Sync = nil, nil
	if s.stored != nil {
		j := s.stored.journal
		o.Record = func(kind string, data any) error {
			if kind == KindTaskOutput && s.outputHeld() {
				return nil
			}
			return s.recorded(j.Append(kind, data))
		}
		o.Sync = j.Sync
	}
	if o.Logger == nil {
		o.Logger = log
	}
	set := tasks.New(o)
	if s.stored != nil && len(s.stored.Tasks) > 0 {
		set.Restore(s.stored.Tasks)
	}
	return set
}

// CloseTasks stops the background tasks still running as cancelled:
// the client closed or deleted the session. Nothing starts afterwards.
func (s *Session) CloseTasks() { s.tasks.Close(tasks.StateCancelled) }

// notices is the agent's source of notices: the tasks that settled.
func (s *Session) notices() []agent.Notice {
	ns := s.tasks.TakeNotices()
	if len(ns) == 0 {
		return nil
	}
	out := make([]agent.Notice, len(ns))
	for i, n := range ns {
		out[i] = agent.Notice{
			Text:      n.Text,
			Title:     "Task " + n.TaskID + " " + string(n.State) + ": " + n.Title,
			RawOutput: map[string]any{"task": n.TaskID, "state": n.State, "usage": n.Usage},
		}
	}
	return out
}

// taskTools is a tool set whose task tools ([tasks.Binder]) are bound to
// the session's set.
type taskTools struct {
	ts  agent.ToolSet
	set *tasks.Set
}

func (t taskTools) Tools() []tools.Tool { return t.ts.Tools() }

func (t taskTools) Get(name string) (tools.Tool, bool) {
	tl, ok := t.ts.Get(name)
	if b, isBinder := tl.(tasks.Binder); ok && isBinder {
		return b.BindTasks(t.set), true
	}
	return tl, ok
}
