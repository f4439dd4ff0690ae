// This file keeps a set's tasks in the session's journal and rebuilds
// them from it: a record per start, continue and settle, the output as it
// comes (at most one record per task a second), a mark when the model has
// seen a result; and a load, where a task the journal still says is
// running was interrupted.

package tasks

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// Journal record kinds of the tasks.
const (
	// RecordTask is a task's whole state: on start, continue and settle.
	RecordTask = "task"
	// RecordOutput is output a running task printed since the last
	// record.
	RecordOutput = "task_output"
	// RecordSeen marks that the model has seen a settled task's result.
	RecordSeen = "task_seen"
)

// FlushInterval is the least time between two output records of a task:
// a crash loses at most this much of a running task's output.
const FlushInterval = time.Second

// taskRecord is a RecordTask's data.
type taskRecord struct {
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"`
	Title string `json:"title,omitempty"`
	State State  `json:"state"`
	// Output, when present, replaces the output; Dropped bytes came
	// before it.
	Output  *string         `json:"output,omitempty"`
	Dropped int64           `json:"dropped,omitempty"`
	Result  string          `json:"result,omitempty"`
	Usage   llm.Usage       `json:"usage,omitzero"`
	Started time.Time       `json:"started"`
	Ended   time.Time       `json:"ended,omitzero"`
	Child   string          `json:"child,omitempty"`
	Runs    int             `json:"runs,omitempty"`
	Job     json.RawMessage `json:"job,omitempty"`
}

// outputRecord is a RecordOutput's data: Text begins at offset At of the
// task's output stream.
type outputRecord struct {
	ID   string `json:"id"`
	At   int64  `json:"at"`
	Text string `json:"text"`
}

// seenRecord is a RecordSeen's data.
type seenRecord struct {
	ID string `json:"id"`
}

// recordLocked is the task's state as a record; withOutput puts the whole
// kept output in it.
func (t *task) recordLocked(withOutput bool) taskRecord {
	r := taskRecord{ID: t.id, Kind: t.kind, Title: t.title, State: t.state, Result: t.result, Usage: t.usage,
		Started: t.started, Ended: t.ended, Child: t.child, Runs: t.runs, Job: t.saved}
	if withOutput {
		out := string(t.out.kept())
		r.Output, r.Dropped = &out, t.out.dropped()
	}
	return r
}

// record appends a record; the journal logs a failure, and a record that
// cannot be saved stops the session's running turn.
func (s *Set) record(kind string, data any) {
	if s.o.Record != nil {
		_ = s.o.Record(kind, data)
	}
}

// sync makes the records durable: a task may settle while no turn runs,
// and a turn's end is when the journal is synced otherwise.
func (s *Set) sync() {
	if s.o.Sync != nil {
		if err := s.o.Sync(); err != nil {
			s.log.Warn("task records not synced", "err", err)
		}
	}
}

// outputWritten arms the task's next output record.
func (s *Set) outputWritten(t *task) {
	if s.o.Record == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flush != nil || t.state.Settled() {
		return
	}
	s.timers.Add(1)
	t.flush = time.AfterFunc(FlushInterval, func() {
		defer s.timers.Done()
		t.mu.Lock()
		if t.flush == nil {
			t.mu.Unlock()
			return
		}
		t.flush = nil
		text, lost := t.out.since(t.savedAt)
		at := t.savedAt + lost
		t.savedAt = t.out.written
		t.mu.Unlock()
		if text != "" {
			s.record(RecordOutput, outputRecord{ID: t.id, At: at, Text: text})
		}
	})
}

// markSeenLocked notes that the model has the settled run's result.
func (s *Set) markSeenLocked(t *task) {
	if t.seen || !t.state.Settled() {
		return
	}
	t.seen = true
	s.record(RecordSeen, seenRecord{ID: t.id})
}

// Record is a task record read back from the journal.
type Record struct {
	Kind string
	Data json.RawMessage
}

// Restore rebuilds the tasks of a loaded session from its records, in
// journal order, before the set is used. A task the journal still says is
// running was cut short when the daemon stopped: it becomes interrupted,
// with the output it had, and that is recorded. Every settled task whose
// result the model had not seen gets a notice for the next model call.
// Jobs are rebuilt with [Options.Restore] (nothing is started: a job
// restores what it needs when it is continued).
func (s *Set) Restore(recs []Record) {
	for _, r := range recs {
		switch r.Kind {
		case RecordTask:
			var tr taskRecord
			if json.Unmarshal(r.Data, &tr) != nil || tr.ID == "" {
				continue
			}
			s.restoreTask(tr)
		case RecordOutput:
			var or outputRecord
			if json.Unmarshal(r.Data, &or) != nil {
				continue
			}
			if t := s.byID[or.ID]; t != nil {
				t.out.writeAt(or.At, or.Text)
				t.savedAt = t.out.written
			}
		case RecordSeen:
			var sr seenRecord
			if json.Unmarshal(r.Data, &sr) == nil && s.byID[sr.ID] != nil {
				s.byID[sr.ID].seen = true
			}
		}
	}
	for _, t := range s.order {
		if n, err := strconv.Atoi(strings.TrimPrefix(t.id, "t")); err == nil && n > s.seq {
			s.seq = n
		}
		t.released = true
		if t.state == StateRunning {
			t.state, t.ended, t.seen = StateInterrupted, s.o.Now(), false
			t.result = "The daemon stopped while the task ran."
			s.record(RecordTask, t.recordLocked(true))
		}
		if t.saved != nil && s.o.Restore != nil {
			job, err := s.o.Restore(t.kind, t.saved)
			if err != nil {
				s.log.Info("a loaded task cannot be continued", "task", t.id, "err", err)
			} else {
				t.job = job
			}
		}
		if !t.seen {
			s.notices = append(s.notices, noticeFor(t))
		}
	}
	s.pending.Store(len(s.notices) > 0)
	for len(s.order) > s.o.MaxKept {
		delete(s.byID, s.order[0].id)
		s.order = s.order[1:]
		s.forgottenLocked()
	}
}

// restoreTask applies one task record.
func (s *Set) restoreTask(tr taskRecord) {
	t := s.byID[tr.ID]
	if t == nil {
		t = &task{s: s, id: tr.ID, kind: tr.Kind, out: tail{limit: s.o.OutputLimit}}
		s.byID[t.id] = t
		s.order = append(s.order, t)
	}
	t.title, t.state, t.result, t.usage = tr.Title, tr.State, tr.Result, tr.Usage
	t.started, t.ended, t.child, t.runs = tr.Started, tr.Ended, tr.Child, tr.Runs
	t.seen = false
	if tr.Job != nil {
		t.saved = tr.Job
	}
	if tr.Output != nil {
		t.out.set(*tr.Output, tr.Dropped)
		t.savedAt = t.out.written
	}
}
