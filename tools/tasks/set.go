// This file implements a session's set of tasks: starting one, its run
// goroutine and how it settles, cancel, steering, continuing a settled
// one, the idle release and closing the set.

package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools/internal/choice"
)

// Defaults of [Options].
const (
	DefaultMaxRunning  = 16
	DefaultOutputLimit = 256 << 10
	DefaultIdleRelease = 10 * time.Minute
	DefaultMaxKept     = 256
)

// Options configure a [Set]. Zero values are the defaults.
type Options struct {
	// MaxRunning is the most tasks that run at the same time; starting or
	// continuing one more is refused (default [DefaultMaxRunning]).
	MaxRunning int
	// Settings name the limits in the logs of their hits (the daemon's
	// flags).
	Settings Settings
	// OutputLimit is the bytes of output a task keeps, the tail (default
	// [DefaultOutputLimit]).
	OutputLimit int
	// MaxKept is how many tasks a set remembers, each with up to
	// OutputLimit of output: beyond it the oldest settled task is
	// forgotten (its journal records stay), so that a session starting
	// tasks for days holds a bounded set (default [DefaultMaxKept]). A
	// forgotten task's id is an error that says so.
	MaxKept int
	// IdleRelease is how long a settled task keeps what a quick continue
	// needs (a child process, a pooled connection, an in-process child)
	// before letting go of it (default [DefaultIdleRelease]; negative:
	// never, until the set closes).
	IdleRelease time.Duration
	// Record appends a record to the session's journal and Sync makes
	// what was appended durable; nil: the tasks are not recorded.
	Record func(kind string, data any) error
	Sync   func() error
	// Restore rebuilds the job of a task loaded from the journal from
	// what its [Saver] saved; nil, or an error, leaves the loaded task
	// without a job: it can be read but not continued.
	Restore func(kind Kind, saved []byte) (Job, error)
	// Logger receives the set's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Settings name the limits of [Options] in the logs of their hits, one
// field for each limit of the same name; an empty field is that name.
type Settings struct{ MaxRunning, MaxKept, OutputLimit string }

// Errors of the set. Each is worded for the model.
var (
	ErrClosed = errors.New("the session is closing: no task can start")
)

// LimitError is the refusal of a start or continue over the limit of
// running tasks.
type LimitError struct{ Limit int }

func (e *LimitError) Error() string {
	running := fmt.Sprintf("%d background tasks are", e.Limit)
	if e.Limit == 1 {
		running = "1 background task is"
	}
	return running + " already running, the most a session may run at once; wait for one (task_wait) or cancel one (task_cancel) first"
}

// NoTaskError is the error for an id the set does not know.
type NoTaskError struct {
	ID string
	// Kept is set when the id is one of a task the set forgot: the most
	// tasks it keeps, named by Setting.
	Kept    int
	Setting string
}

func (e *NoTaskError) Error() string {
	if e.Kept > 0 {
		return fmt.Sprintf("task %q is forgotten: a session keeps its last %d tasks (%s); task_list lists them", e.ID, e.Kept, e.Setting)
	}
	return fmt.Sprintf("there is no task %q in this session (task_list lists them)", e.ID)
}

// noTaskLocked is the error for id, which the set does not hold: a
// forgotten task's if the set gave it out before.
func (s *Set) noTaskLocked(id string) *NoTaskError {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "t"))
	if err == nil && strings.HasPrefix(id, "t") && n >= 1 && n <= s.seq && s.forgot {
		return &NoTaskError{ID: id, Kept: s.o.MaxKept, Setting: s.o.Settings.MaxKept}
	}
	return &NoTaskError{ID: id}
}

// Set is a session's tasks. It is safe for concurrent use; its goroutines
// (one per running task, and the timers that save output and release idle
// tasks) end before [Set.Close] returns.
type Set struct {
	o   Options
	log *slog.Logger

	mu          sync.Mutex
	byID        map[string]*task // guarded by mu
	order       []*task          // in start order; guarded by mu
	seq         int              // guarded by mu
	running     int              // tasks running or being continued; guarded by mu
	closed      bool             // guarded by mu
	limitLogged bool             // guarded by mu
	forgot      bool             // a task was forgotten; guarded by mu
	// changed is closed and replaced each time a task settles: what
	// Wait sleeps on. Guarded by mu.
	changed chan struct{}
	notices []Notice // not yet taken; guarded by mu
	// pending mirrors len(notices) > 0, so that the agent's check before
	// each model call is one atomic load.
	pending atomic.Bool

	runs   sync.WaitGroup // run goroutines
	timers sync.WaitGroup // timer callbacks armed or running
}

// task is one task. Lock order: Set.mu before task.mu.
type task struct {
	s    *Set
	id   string
	kind Kind

	mu      sync.Mutex
	title   string
	job     Job // nil: a loaded task whose job could not be rebuilt
	state   State
	out     tail
	readAt  int64 // the model's read cursor in the output stream
	savedAt int64 // how much of the output the journal has
	result  string
	usage   llm.Usage
	started time.Time
	ended   time.Time
	child   string
	runs    int
	// cancel stops the running run; nil while settled.
	cancel context.CancelFunc
	// final is the state a cancelled run settles in (cancelled, or
	// interrupted when the set closes for a stop).
	final State
	// seen: the model has the last settled run's result (a notice, a
	// wait, a read).
	seen     bool
	released bool
	idle     *time.Timer // the idle release, while armed
	flush    *time.Timer // the next output record, while armed
	saved    []byte      // the job's last Save, for the records
}

// New returns an empty set.
func New(o Options) *Set {
	o.MaxRunning = choice.PositiveOr(o.MaxRunning, DefaultMaxRunning)
	o.OutputLimit = choice.PositiveOr(o.OutputLimit, DefaultOutputLimit)
	o.IdleRelease = cmp.Or(o.IdleRelease, DefaultIdleRelease)
	o.MaxKept = choice.PositiveOr(o.MaxKept, DefaultMaxKept)
	if o.Now == nil {
		o.Now = time.Now
	}
	settingnames.Fill(&o.Settings)
	log := cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return &Set{o: o, log: log, byID: map[string]*task{}, changed: make(chan struct{})}
}

// OutputLimit is the bytes of output a task keeps, and the setting that
// says so (for a runner that logs a cut to it).
func (s *Set) OutputLimit() (bytes int, setting string) {
	return s.o.OutputLimit, s.o.Settings.OutputLimit
}

// Start starts job as a new task and returns it, running. It fails with
// [ErrClosed] once the set is closing and with a [*LimitError] when the
// most tasks are running already.
func (s *Set) Start(spec Spec, job Job) (Info, error) {
	s.mu.Lock()
	if err := s.admitLocked(); err != nil {
		s.mu.Unlock()
		return Info{}, err
	}
	s.seq++
	t := &task{s: s, id: "t" + strconv.Itoa(s.seq), kind: spec.Kind, title: spec.Title, job: job,
		state: StateRunning, started: s.o.Now(), runs: 1, out: tail{limit: s.o.OutputLimit}}
	if sv, ok := job.(Saver); ok {
		t.saved = sv.Save()
	}
	s.byID[t.id] = t
	s.order = append(s.order, t)
	s.running++
	s.forgetLocked()
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	s.runs.Add(1)
	s.mu.Unlock()

	t.mu.Lock()
	info := t.infoLocked()
	s.record(RecordTask, t.recordLocked(true))
	t.mu.Unlock()
	go s.run(ctx, t)
	return info, nil
}

// admitLocked checks that one more task may run.
func (s *Set) admitLocked() error {
	if s.closed {
		return ErrClosed
	}
	if s.running >= s.o.MaxRunning {
		if !s.limitLogged {
			s.limitLogged = true
			s.log.Warn("background task limit reached", "setting", s.o.Settings.MaxRunning, "limit", s.o.MaxRunning)
		}
		return &LimitError{Limit: s.o.MaxRunning}
	}
	return nil
}

// forgetLocked drops the oldest settled tasks beyond MaxKept; the first
// time is logged.
func (s *Set) forgetLocked() {
	for i := 0; len(s.order) > s.o.MaxKept && i < len(s.order); {
		t := s.order[i]
		t.mu.Lock()
		settled := t.state.Settled()
		if settled {
			// Its release happens now: a timer armed for it would keep
			// Close waiting for the idle time.
			s.stopIdleLocked(t)
		}
		t.mu.Unlock()
		if !settled {
			i++
			continue
		}
		s.order = append(s.order[:i], s.order[i+1:]...)
		delete(s.byID, t.id)
		s.forgottenLocked()
		s.dropNoticeLocked(t.id)
		s.runs.Go(func() { s.release(t) })
	}
}

// run is a task's run goroutine.
func (s *Set) run(ctx context.Context, t *task) {
	defer s.runs.Done()
	s.settle(t, s.runJob(ctx, t))
}

// runJob runs the job, containing a panic: the task fails, the daemon
// lives on.
func (s *Set) runJob(ctx context.Context, t *task) (o Outcome) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("background task panicked", "task", t.id, "panic", v, "stack", string(debug.Stack()))
			o = Outcome{State: StateFailed, Result: "The task crashed."}
		}
	}()
	return t.job.Run(ctx, &Output{t: t})
}

// settle ends a run: its state, a notice for the model, a record of it
// and, for a job that holds something, the idle release. The notice is
// pending before the record is written, and the record is written before
// anyone can continue the task: whoever reads the journal's settle record
// knows the notice waits, and a continue's record always follows it.
func (s *Set) settle(t *task, o Outcome) {
	var saved []byte
	if sv, ok := t.job.(Saver); ok {
		saved = sv.Save()
	}
	s.mu.Lock()
	t.mu.Lock()
	st := o.State
	switch {
	case st == StateCancelled && t.final != "":
		st = t.final
	case st == "" || st == StateRunning:
		st = StateFailed
	}
	t.state, t.result, t.ended = st, o.Result, s.o.Now()
	t.usage.Add(o.Usage)
	t.cancel, t.final, t.seen = nil, "", false
	if saved != nil {
		t.saved = saved
	}
	if t.flush != nil && t.flush.Stop() {
		s.timers.Done()
	}
	t.flush = nil
	s.running--
	closed := s.closed
	if !closed {
		s.notices = append(s.notices, noticeFor(t))
		s.pending.Store(true)
	}
	s.record(RecordTask, t.recordLocked(true))
	t.savedAt = t.out.written
	t.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.sync()
	if !closed {
		s.armIdle(t)
	}
}

// armIdle schedules the release of what a settled task holds; a closed
// set (which stops every timer) arms none.
func (s *Set) armIdle(t *task) {
	if _, ok := t.job.(Releaser); !ok || s.o.IdleRelease < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.closed || t.state == StateRunning || t.released || t.idle != nil || s.byID[t.id] != t {
		return // closed, running again, released, armed, or forgotten
	}
	s.timers.Add(1)
	t.idle = time.AfterFunc(s.o.IdleRelease, func() {
		defer s.timers.Done()
		t.mu.Lock()
		t.idle = nil
		t.mu.Unlock()
		s.release(t)
	})
}

// release lets go of what a settled task's job holds, once.
func (s *Set) release(t *task) {
	t.mu.Lock()
	r, ok := t.job.(Releaser)
	if !ok || t.state == StateRunning || t.released {
		t.mu.Unlock()
		return
	}
	t.released = true
	t.mu.Unlock()
	r.Release()
}

// stopIdleLocked disarms the idle release.
func (s *Set) stopIdleLocked(t *task) {
	if t.idle != nil && t.idle.Stop() {
		s.timers.Done()
	}
	t.idle = nil
}

// get returns the task id.
func (s *Set) get(id string) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byID[id]
	if !ok {
		return nil, s.noTaskLocked(id)
	}
	return t, nil
}

// Cancel stops a running task and returns it once it has settled
// (cancelled), or when ctx ends. A settled task is an error.
func (s *Set) Cancel(ctx context.Context, id string) (Info, error) {
	t, err := s.get(id)
	if err != nil {
		return Info{}, err
	}
	t.mu.Lock()
	if t.state.Settled() {
		st := t.state
		t.mu.Unlock()
		return Info{}, fmt.Errorf("task %s has already settled (%s)", id, st)
	}
	t.final = StateCancelled
	cancel := t.cancel
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return s.waitSettled(ctx, t)
}

// waitSettled waits until t settles or ctx ends.
func (s *Set) waitSettled(ctx context.Context, t *task) (Info, error) {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		t.mu.Lock()
		settled, info := t.state.Settled(), t.infoLocked()
		t.mu.Unlock()
		if settled {
			return info, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return info, ctx.Err()
		}
	}
}

// Send steers a running task: a message for its child. A task whose job
// cannot take one is an error naming why.
func (s *Set) Send(ctx context.Context, id, text string) error {
	t, err := s.get(id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	job, st := t.job, t.state
	t.mu.Unlock()
	if st.Settled() {
		return fmt.Errorf("task %s is not running (%s); continue it with task_continue instead", id, st)
	}
	sr, ok := job.(Steerer)
	if !ok {
		return fmt.Errorf("task %s is a %s: it takes no messages", id, t.kind)
	}
	return sr.Steer(ctx, text)
}

// Continue runs a settled task again with prompt, keeping what its job
// did (a child keeps its conversation). A running task, a job that cannot
// continue, and the limit of running tasks are errors.
func (s *Set) Continue(ctx context.Context, id, prompt string) (Info, error) {
	s.mu.Lock()
	t, ok := s.byID[id]
	if !ok {
		err := s.noTaskLocked(id)
		s.mu.Unlock()
		return Info{}, err
	}
	t.mu.Lock()
	c, canContinue := t.job.(Continuer)
	switch {
	case !t.state.Settled():
		t.mu.Unlock()
		s.mu.Unlock()
		return Info{}, fmt.Errorf("task %s is still running; send it a message with task_send instead", id)
	case !canContinue && t.kind == KindCommand:
		t.mu.Unlock()
		s.mu.Unlock()
		return Info{}, fmt.Errorf("task %s is a command: a command cannot be continued; start it again with run_command", id)
	case !canContinue:
		t.mu.Unlock()
		s.mu.Unlock()
		return Info{}, fmt.Errorf("task %s cannot be continued: what it needs was not saved", id)
	}
	if err := s.admitLocked(); err != nil {
		t.mu.Unlock()
		s.mu.Unlock()
		return Info{}, err
	}
	prev := t.state
	t.state = StateRunning
	s.stopIdleLocked(t)
	s.running++
	s.dropNoticeLocked(id)
	t.mu.Unlock()
	s.mu.Unlock()

	if err := c.Continue(ctx, prompt); err != nil {
		t.mu.Lock()
		t.state = prev
		t.mu.Unlock()
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
		s.armIdle(t)
		return Info{}, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.released, t.cancel, t.final = false, cancel, ""
	t.result, t.ended = "", time.Time{}
	t.runs++
	t.out.write(continuedLine(t.out.written > 0, prompt))
	info := t.infoLocked()
	rec := t.recordLocked(true)
	t.savedAt = t.out.written
	t.mu.Unlock()
	s.record(RecordTask, rec)

	s.mu.Lock()
	if s.closed {
		// The set closed meanwhile: the continued run is stopped at once.
		t.mu.Lock()
		t.final = StateInterrupted
		t.mu.Unlock()
		cancel()
	}
	s.runs.Add(1)
	s.mu.Unlock()
	go s.run(runCtx, t)
	return info, nil
}

// continuedLine separates a continued run's output from the run before.
func continuedLine(after bool, prompt string) string {
	line := "--- continued: " + utf8cut.Line(prompt, 120) + " ---\n"
	if after {
		return "\n" + line
	}
	return line
}

// Close stops every running task, which settles in final
// (StateCancelled when the session is closed or deleted,
// StateInterrupted when the daemon stops or its client went away), waits
// for their goroutines and timers, and releases what every job holds. It
// is idempotent; nothing starts afterwards.
func (s *Set) Close(final State) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	all := append([]*task(nil), s.order...)
	s.notices = nil
	s.pending.Store(false)
	s.mu.Unlock()
	for _, t := range all {
		t.mu.Lock()
		cancel := t.cancel
		if t.state == StateRunning {
			t.final = final
		}
		s.stopIdleLocked(t)
		t.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
	s.runs.Wait()
	for _, t := range all {
		t.mu.Lock()
		if t.flush != nil && t.flush.Stop() {
			s.timers.Done()
		}
		t.flush = nil
		t.mu.Unlock()
	}
	s.timers.Wait()
	for _, t := range all {
		s.release(t)
	}
}

// infoLocked is the task's Info.
func (t *task) infoLocked() Info {
	return Info{
		ID: t.id, Kind: t.kind, Title: t.title, State: t.state,
		Output: string(t.out.kept()), Dropped: t.out.dropped(),
		Result: t.result, Usage: t.usage, Started: t.started, Ended: t.ended,
		Child: t.child, Runs: t.runs,
	}
}

// List returns every task the set remembers, in start order.
func (s *Set) List() []Info {
	s.mu.Lock()
	all := append([]*task(nil), s.order...)
	s.mu.Unlock()
	out := make([]Info, 0, len(all))
	for _, t := range all {
		t.mu.Lock()
		out = append(out, t.infoLocked())
		t.mu.Unlock()
	}
	return out
}

// Get returns one task.
func (s *Set) Get(id string) (Info, error) {
	t, err := s.get(id)
	if err != nil {
		return Info{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.infoLocked(), nil
}

// Running returns how many tasks are running.
func (s *Set) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// forgottenLocked notes that a task was forgotten, and logs the first
// time: a session that reaches MaxKept keeps going, but a model asking
// for an old task will be told it is gone, and whoever reads the log why.
func (s *Set) forgottenLocked() {
	if s.forgot {
		return
	}
	s.forgot = true
	s.log.Info("forgetting the oldest settled background tasks", "setting", s.o.Settings.MaxKept, "limit", s.o.MaxKept)
}
