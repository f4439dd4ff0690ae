package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools/tasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// job is a job a test drives: it writes what arrives on out, and ends
// with what arrives on end or, cancelled, as cancelled.
type job struct {
	out      chan string
	wrote    chan struct{}
	end      chan tasks.Outcome
	started  chan struct{}
	released atomic.Int32
	steered  chan string
	saved    string
	runs     atomic.Int32
}

func newJob() *job {
	return &job{out: make(chan string), wrote: make(chan struct{}, 64), end: make(chan tasks.Outcome), started: make(chan struct{}, 8), steered: make(chan string, 8)}
}

func (j *job) Run(ctx context.Context, out *tasks.Output) tasks.Outcome {
	j.runs.Add(1)
	j.started <- struct{}{}
	for {
		select {
		case s := <-j.out:
			out.Write(s)
			j.wrote <- struct{}{}
		case o := <-j.end:
			return o
		case <-ctx.Done():
			return tasks.Outcome{State: tasks.StateCancelled, Result: "stopped"}
		}
	}
}

// write hands text to the running job and returns once it was written.
func (j *job) write(t *testing.T, s string) {
	t.Helper()
	select {
	case j.out <- s:
		<-j.wrote
	case <-time.After(10 * time.Second):
		t.Fatal("the job does not run")
	}
}

func (j *job) finish(t *testing.T, o tasks.Outcome) {
	t.Helper()
	select {
	case j.end <- o:
	case <-time.After(10 * time.Second):
		t.Fatal("the job does not run")
	}
}

// steerJob is a job that takes messages, continues and can be saved.
type steerJob struct{ *job }

func (j steerJob) Steer(_ context.Context, text string) error { j.steered <- text; return nil }
func (j steerJob) Continue(context.Context, string) error     { return nil }
func (j steerJob) Release()                                   { j.released.Add(1) }
func (j steerJob) Save() json.RawMessage                      { return json.RawMessage(`{"saved":"` + j.saved + `"}`) }

// waitSettled waits for task id to settle (through the set's own wait).
func waitSettled(t *testing.T, s *tasks.Set, id string) tasks.Info {
	t.Helper()
	w, err := s.Wait(t.Context(), id, 10*time.Second)
	if err != nil || !w.Settled {
		t.Fatalf("task %s did not settle: %+v, %v", id, w, err)
	}
	return w.Task
}

func TestRead_ReturnsTheOutputInStepsThenTheResult(t *testing.T) {
	s := tasks.New(tasks.Options{})
	defer s.Close(tasks.StateInterrupted)
	j := newJob()
	info, err := s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "make"}, j)
	if err != nil || info.State != tasks.StateRunning || info.ID != "t1" {
		t.Fatalf("Start = %+v, %v", info, err)
	}
	j.write(t, "one\n")
	r, err := s.Read("t1")
	if err != nil || r.New != "one\n" || r.State != tasks.StateRunning {
		t.Fatalf("first read = %+v, %v", r, err)
	}
	j.write(t, "two\n")
	if r, _ := s.Read("t1"); r.New != "two\n" || r.Output != "one\ntwo\n" {
		t.Fatalf("second read = %+v", r)
	}
	if r, _ := s.Read("t1"); r.New != "" {
		t.Fatalf("a read with nothing new = %+v", r)
	}
	j.finish(t, tasks.Outcome{State: tasks.StateCompleted, Result: "exit code 0"})
	in := waitSettled(t, s, "t1")
	if in.State != tasks.StateCompleted || in.Result != "exit code 0" || in.Ended.IsZero() {
		t.Fatalf("settled = %+v", in)
	}
	if _, err := s.Read("t9"); !errors.As(err, new(*tasks.NoTaskError)) {
		t.Fatalf("Read of an unknown id = %v", err)
	}
}

func TestOutput_KeepsTheTailAndSaysHowMuchIsGone(t *testing.T) {
	s := tasks.New(tasks.Options{OutputLimit: 8})
	defer s.Close(tasks.StateInterrupted)
	j := newJob()
	if _, err := s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "yes"}, j); err != nil {
		t.Fatal(err)
	}
	j.write(t, "0123")
	if r, _ := s.Read("t1"); r.New != "0123" {
		t.Fatalf("read = %+v", r)
	}
	for _, s := range []string{"4567", "89ab", "cdef", "ghij"} {
		j.write(t, s)
	}
	r, _ := s.Read("t1")
	if r.Output != "cdefghij" || r.Dropped != 12 || r.New != "cdefghij" || r.Lost != 8 {
		t.Fatalf("read = output %q dropped %d new %q lost %d", r.Output, r.Dropped, r.New, r.Lost)
	}
	j.finish(t, tasks.Outcome{State: tasks.StateCompleted})
	waitSettled(t, s, "t1")
}

func TestWait_TimesOutWithTheOutputSoFarAndReturnsWhenTheTaskSettles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tasks.New(tasks.Options{})
		defer s.Close(tasks.StateInterrupted)
		j := newJob()
		if _, err := s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "slow"}, j); err != nil {
			t.Fatal(err)
		}
		<-j.started
		j.out <- "half"
		<-j.wrote
		w, err := s.Wait(t.Context(), "t1", 5*time.Second)
		if err != nil || w.Settled || w.Task.Output != "half" || w.Task.State != tasks.StateRunning {
			t.Fatalf("a wait that times out = %+v, %v", w, err)
		}
		done := make(chan tasks.Waited)
		go func() {
			w, _ := s.Wait(context.Background(), "t1", time.Hour)
			done <- w
		}()
		synctest.Wait()
		j.end <- tasks.Outcome{State: tasks.StateFailed, Result: "exit code 2"}
		if w := <-done; !w.Settled || w.Task.State != tasks.StateFailed || w.Task.Result != "exit code 2" {
			t.Fatalf("the wait that saw it settle = %+v", w)
		}
	})
}

func TestWait_AnyReturnsATaskThatSettledUnseenAtOnceElseTheNextToSettle(t *testing.T) {
	s := tasks.New(tasks.Options{})
	defer s.Close(tasks.StateInterrupted)
	a, b := newJob(), newJob()
	s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "a"}, a)
	s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "b"}, b)
	b.finish(t, tasks.Outcome{State: tasks.StateCompleted, Result: "b done"})
	w, err := s.Wait(t.Context(), "", 10*time.Second)
	if err != nil || !w.Settled || w.Task.ID != "t2" {
		t.Fatalf("first any = %+v, %v", w, err)
	}
	done := make(chan tasks.Waited, 1)
	go func() {
		w, _ := s.Wait(context.Background(), "", 10*time.Second)
		done <- w
	}()
	a.finish(t, tasks.Outcome{State: tasks.StateCompleted, Result: "a done"})
	if w := <-done; !w.Settled || w.Task.ID != "t1" {
		t.Fatalf("second any = %+v", w)
	}
	if w, _ := s.Wait(t.Context(), "", time.Second); !w.None {
		t.Fatalf("a wait with nothing running and nothing unseen = %+v", w)
	}
	if ns := s.TakeNotices(); len(ns) != 0 {
		t.Fatalf("results the waits returned are noticed again: %+v", ns)
	}
}

func TestNotices_ASettledTaskIsNoticedOnceWithTheHeadOfItsResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tasks.New(tasks.Options{})
		defer s.Close(tasks.StateInterrupted)
		if ns := s.TakeNotices(); ns != nil {
			t.Fatalf("notices before anything settled: %+v", ns)
		}
		j := newJob()
		s.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: "find the loader"}, j)
		<-j.started
		long := strings.Repeat("x", tasks.NoticeHead+500)
		j.end <- tasks.Outcome{State: tasks.StateCompleted, Result: "found it\n" + long}
		synctest.Wait() // the task has settled
		ns := s.TakeNotices()
		if len(ns) != 1 || ns[0].TaskID != "t1" || ns[0].State != tasks.StateCompleted ||
			!strings.Contains(ns[0].Text, "Background task t1 (subagent: find the loader) completed.") ||
			!strings.Contains(ns[0].Text, "found it") || !strings.Contains(ns[0].Text, "more bytes") || len(ns[0].Text) > tasks.NoticeHead+400 {
			t.Fatalf("notices = %+v", ns)
		}
		if ns := s.TakeNotices(); ns != nil {
			t.Fatalf("a notice taken twice: %+v", ns)
		}
		// A task whose result the model read is not noticed.
		k := newJob()
		s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "make"}, k)
		<-k.started
		k.end <- tasks.Outcome{State: tasks.StateCompleted, Result: "exit code 0"}
		synctest.Wait()
		s.Read("t2")
		if ns := s.TakeNotices(); ns != nil {
			t.Fatalf("a result already read is noticed: %+v", ns)
		}
	})
}

func TestStart_RefusesMoreTasksThanMayRunAtOnce(t *testing.T) {
	s := tasks.New(tasks.Options{MaxRunning: 2})
	defer s.Close(tasks.StateInterrupted)
	a, b := newJob(), newJob()
	s.Start(tasks.Spec{Kind: tasks.KindCommand}, a)
	s.Start(tasks.Spec{Kind: tasks.KindCommand}, b)
	var le *tasks.LimitError
	if _, err := s.Start(tasks.Spec{Kind: tasks.KindCommand}, newJob()); !errors.As(err, &le) || le.Limit != 2 {
		t.Fatalf("a third start = %v", err)
	}
	a.finish(t, tasks.Outcome{State: tasks.StateCompleted})
	waitSettled(t, s, "t1")
	if info, err := s.Start(tasks.Spec{Kind: tasks.KindCommand}, newJob()); err != nil || info.ID != "t3" {
		t.Fatalf("a start once one settled = %+v, %v", info, err)
	}
}

func TestCancel_StopsTheTaskButASettledOneIsAnError(t *testing.T) {
	s := tasks.New(tasks.Options{})
	// Closing right after the cancel returns: the idle release the settle
	// arms is not left behind (a job that holds something).
	defer s.Close(tasks.StateInterrupted)
	j := steerJob{newJob()}
	s.Start(tasks.Spec{Kind: tasks.KindCommand}, j)
	in, err := s.Cancel(t.Context(), "t1")
	if err != nil || in.State != tasks.StateCancelled || in.Result != "stopped" {
		t.Fatalf("Cancel = %+v, %v", in, err)
	}
	if _, err := s.Cancel(t.Context(), "t1"); err == nil || !strings.Contains(err.Error(), "already settled") {
		t.Fatalf("a second Cancel = %v", err)
	}
}

func TestClose_InterruptsRunningTasksWaitsForThemAndReleasesEveryJob(t *testing.T) {
	var recs []string
	var mu sync.Mutex
	s := tasks.New(tasks.Options{Record: func(kind string, data any) error {
		b, _ := json.Marshal(data)
		mu.Lock()
		recs = append(recs, kind+" "+string(b))
		mu.Unlock()
		return nil
	}})
	running, settled := steerJob{newJob()}, steerJob{newJob()}
	s.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: "r"}, running)
	s.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: "s"}, settled)
	settled.finish(t, tasks.Outcome{State: tasks.StateCompleted})
	waitSettled(t, s, "t2")
	s.Close(tasks.StateInterrupted)
	if in, _ := s.Get("t1"); in.State != tasks.StateInterrupted {
		t.Fatalf("the running task after Close = %+v", in)
	}
	if running.released.Load() != 1 || settled.released.Load() != 1 {
		t.Fatalf("released %d and %d times, want once each", running.released.Load(), settled.released.Load())
	}
	if _, err := s.Start(tasks.Spec{Kind: tasks.KindCommand}, newJob()); !errors.Is(err, tasks.ErrClosed) {
		t.Fatalf("Start after Close = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	last := recs[len(recs)-1]
	if !strings.HasPrefix(last, "task ") || !strings.Contains(last, `"state":"interrupted"`) {
		t.Fatalf("records = %q", recs)
	}
}

func TestSendAndContinue_SayWhyATaskCannot(t *testing.T) {
	s := tasks.New(tasks.Options{})
	defer s.Close(tasks.StateInterrupted)
	cmd, child := newJob(), steerJob{newJob()}
	s.Start(tasks.Spec{Kind: tasks.KindCommand}, cmd)
	s.Start(tasks.Spec{Kind: tasks.KindSubagent}, child)
	if err := s.Send(t.Context(), "t1", "hi"); err == nil || !strings.Contains(err.Error(), "is a command: it takes no messages") {
		t.Fatalf("Send to a command = %v", err)
	}
	if err := s.Send(t.Context(), "t2", "hi"); err != nil || <-child.steered != "hi" {
		t.Fatalf("Send to a child = %v", err)
	}
	if _, err := s.Continue(t.Context(), "t2", "more"); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("Continue of a running task = %v", err)
	}
	cmd.finish(t, tasks.Outcome{State: tasks.StateCompleted})
	waitSettled(t, s, "t1")
	if _, err := s.Continue(t.Context(), "t1", "more"); err == nil || !strings.Contains(err.Error(), "a command cannot be continued") {
		t.Fatalf("Continue of a command = %v", err)
	}
	child.finish(t, tasks.Outcome{State: tasks.StateCompleted, Result: "first"})
	waitSettled(t, s, "t2")
	if err := s.Send(t.Context(), "t2", "hi"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("Send to a settled task = %v", err)
	}
	in, err := s.Continue(t.Context(), "t2", "more")
	if err != nil || in.State != tasks.StateRunning || in.Runs != 2 {
		t.Fatalf("Continue = %+v, %v", in, err)
	}
	child.finish(t, tasks.Outcome{State: tasks.StateCompleted, Result: "second"})
	if in := waitSettled(t, s, "t2"); in.Result != "second" || child.runs.Load() != 2 || !strings.Contains(in.Output, "--- continued: more ---") {
		t.Fatalf("continued = %+v, %d runs", in, child.runs.Load())
	}
}

func TestIdleRelease_ASettledJobIsReleasedAfterTheIdleTimeNotBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tasks.New(tasks.Options{IdleRelease: time.Minute})
		defer s.Close(tasks.StateInterrupted)
		j := steerJob{newJob()}
		s.Start(tasks.Spec{Kind: tasks.KindSubagent}, j)
		<-j.started
		j.end <- tasks.Outcome{State: tasks.StateCompleted}
		synctest.Wait()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := j.released.Load(); n != 0 {
			t.Fatalf("released %d times before the idle time", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := j.released.Load(); n != 1 {
			t.Fatalf("released %d times after the idle time, want 1", n)
		}
	})
}

// releaseJob ends at once and counts its releases.
type releaseJob struct{ released *atomic.Int32 }

func (releaseJob) Run(context.Context, *tasks.Output) tasks.Outcome {
	return tasks.Outcome{State: tasks.StateCompleted}
}
func (j releaseJob) Release() { j.released.Add(1) }

func TestForget_ATaskForgottenBeyondMaxKeptIsReleasedAndCloseDoesNotWaitForItsIdleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := tasks.New(tasks.Options{IdleRelease: time.Hour})
		var released atomic.Int32
		for range tasks.DefaultMaxKept + 10 {
			if _, err := s.Start(tasks.Spec{Kind: tasks.KindSubagent}, releaseJob{&released}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // settled, its idle release armed
		}
		// The 257th start forgets t1, ..., the 266th t10.
		if n := released.Load(); n != 10 {
			t.Fatalf("%d forgotten tasks released, want 10", n)
		}
		start := time.Now()
		s.Close(tasks.StateInterrupted)
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("Close waited %s of the forgotten tasks' idle time", waited)
		}
		if n := released.Load(); n != tasks.DefaultMaxKept+10 {
			t.Fatalf("%d of %d jobs released after Close", n, tasks.DefaultMaxKept+10)
		}
	})
}

// A set keeps Options.MaxKept tasks: the one forgotten beyond it is an
// error that says it was forgotten and names the setting, an id never
// given out is not, and the first forgetting is logged once.
func TestForget_AForgottenTasksIdIsAnErrorNamingTheSettingAndTheFirstIsLogged(t *testing.T) {
	var log strings.Builder
	s := tasks.New(tasks.Options{MaxKept: 2, Settings: tasks.Settings{MaxKept: "--max-kept-tasks"},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer s.Close(tasks.StateInterrupted)
	var released atomic.Int32
	for i := range 4 {
		if _, err := s.Start(tasks.Spec{Kind: tasks.KindSubagent}, releaseJob{&released}); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, s, "t"+strconv.Itoa(i+1))
	}
	// t1 and t2 are forgotten; t3, t4 kept; t9 never was.
	for id, want := range map[string]string{
		"t1": `task "t1" is forgotten: a session keeps its last 2 tasks (--max-kept-tasks); task_list lists them`,
		"t2": `task "t2" is forgotten: a session keeps its last 2 tasks (--max-kept-tasks); task_list lists them`,
		"t9": `there is no task "t9" in this session (task_list lists them)`,
		"x1": `there is no task "x1" in this session (task_list lists them)`,
	} {
		if _, err := s.Read(id); err == nil || err.Error() != want {
			t.Fatalf("reading %s: %v, want %q", id, err, want)
		}
		if _, err := s.Continue(context.Background(), id, "more"); err == nil || err.Error() != want {
			t.Fatalf("continuing %s: %v, want %q", id, err, want)
		}
	}
	if _, err := s.Read("t3"); err != nil {
		t.Fatalf("a kept task: %v", err)
	}
	if n := strings.Count(log.String(), "forgetting the oldest settled background tasks"); n != 1 || !strings.Contains(log.String(), "setting=--max-kept-tasks limit=2") {
		t.Fatalf("logged %d times, want once naming the setting:\n%s", n, log.String())
	}
}

func TestRunJob_APanickingJobFailsItsTaskOnly(t *testing.T) {
	s := tasks.New(tasks.Options{})
	defer s.Close(tasks.StateInterrupted)
	s.Start(tasks.Spec{Kind: tasks.KindCommand}, panicJob{})
	if in := waitSettled(t, s, "t1"); in.State != tasks.StateFailed || in.Result != "The task crashed." {
		t.Fatalf("a panicking job's task = %+v", in)
	}
}

type panicJob struct{}

func (panicJob) Run(context.Context, *tasks.Output) tasks.Outcome { panic("boom") }

func TestRestore_ATaskTheJournalSaysIsRunningLoadsInterruptedWithItsOutput(t *testing.T) {
	var recs []tasks.Record
	var mu sync.Mutex
	record := func(kind string, data any) error {
		b, _ := json.Marshal(data)
		mu.Lock()
		recs = append(recs, tasks.Record{Kind: kind, Data: b})
		mu.Unlock()
		return nil
	}
	synctest.Test(t, func(t *testing.T) {
		s := tasks.New(tasks.Options{Record: record})
		long, done := steerJob{newJob()}, steerJob{newJob()}
		long.saved, done.saved = "long", "done"
		s.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: "long"}, long)
		s.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: "done"}, done)
		<-long.started
		long.out <- "partial output"
		<-long.wrote
		time.Sleep(tasks.FlushInterval + time.Millisecond) // the output's record
		synctest.Wait()
		<-done.started
		done.end <- tasks.Outcome{State: tasks.StateCompleted, Result: "answer", Usage: llm.Usage{InputTokens: 7}}
		synctest.Wait()
		s.Read("t2") // the model saw this result
		// The daemon dies here: no Close, so the journal still says t1 runs.
		mu.Lock()
		crashed := append([]tasks.Record(nil), recs...)
		mu.Unlock()
		var restored []string
		loaded := tasks.New(tasks.Options{Record: record, Restore: func(kind tasks.Kind, saved []byte) (tasks.Job, error) {
			restored = append(restored, string(saved))
			return steerJob{newJob()}, nil
		}})
		loaded.Restore(crashed)
		list := loaded.List()
		if len(list) != 2 || list[0].State != tasks.StateInterrupted || list[0].Output != "partial output" ||
			list[1].State != tasks.StateCompleted || list[1].Result != "answer" || list[1].Usage.InputTokens != 7 {
			t.Fatalf("loaded = %+v", list)
		}
		if len(restored) != 2 || restored[1] != `{"saved":"done"}` {
			t.Fatalf("jobs restored from %q", restored)
		}
		ns := loaded.TakeNotices()
		if len(ns) != 1 || ns[0].TaskID != "t1" || ns[0].State != tasks.StateInterrupted || !strings.Contains(ns[0].Text, "partial output") {
			t.Fatalf("notices after the load = %+v", ns)
		}
		if info, err := loaded.Start(tasks.Spec{Kind: tasks.KindCommand}, newJob()); err != nil || info.ID != "t3" {
			t.Fatalf("a task started after the load = %+v, %v", info, err)
		}
		loaded.Close(tasks.StateInterrupted)
		s.Close(tasks.StateInterrupted)
	})
}
