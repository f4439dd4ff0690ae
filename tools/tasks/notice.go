// This file implements the notices a set gives its session's agent when a
// task settles, and what the model reads through the task tools: new
// output since the last read, and waiting for a task to settle.

package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/utf8cut"
)

// NoticeHead is how much of a result a notice carries; the rest is a
// task_read away.
const NoticeHead = 2000

// Notice tells the model that a task settled. The session's agent adds it
// to the conversation before its next model call and shows it to the
// editor as a tool call of its own.
type Notice struct {
	TaskID string
	Title  string
	State  State
	// Text is what the model reads.
	Text  string
	Usage llm.Usage
}

// noticeFor is the notice of t's last settle; t.mu is held (or t is not
// shared yet).
func noticeFor(t *task) Notice {
	var b strings.Builder
	fmt.Fprintf(&b, "Background task %s (%s: %s) %s.", t.id, t.kind, t.title, t.state)
	res := strings.TrimSpace(t.result)
	if t.state == StateInterrupted || (res == "" && t.kind == KindCommand) {
		if out := string(t.out.kept()); strings.TrimSpace(out) != "" {
			if res != "" {
				b.WriteString(" " + res)
			}
			b.WriteString("\nIts output so far ends with:\n")
			b.WriteString(tailOf(out, NoticeHead))
			res = ""
		}
	}
	if res != "" {
		b.WriteString("\n")
		b.WriteString(headOf(res, NoticeHead))
	}
	fmt.Fprintf(&b, "\n(task_read with id %q shows all of it.)", t.id)
	return Notice{TaskID: t.id, Title: t.title, State: t.state, Text: b.String(), Usage: t.usage}
}

// TakeNotices returns the notices of tasks that settled since the last
// call, in the order they settled, and counts their results as seen. When
// there are none it costs one atomic load: it is asked before every model
// call.
func (s *Set) TakeNotices() []Notice {
	if !s.pending.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices
	s.notices = nil
	s.pending.Store(false)
	for _, n := range out {
		if t := s.byID[n.TaskID]; t != nil {
			t.mu.Lock()
			s.markSeenLocked(t)
			t.mu.Unlock()
		}
	}
	return out
}

// dropNoticeLocked removes a pending notice of task id: the model got its
// result another way, or the task runs again.
func (s *Set) dropNoticeLocked(id string) {
	for i, n := range s.notices {
		if n.TaskID == id {
			s.notices = append(s.notices[:i], s.notices[i+1:]...)
			break
		}
	}
	s.pending.Store(len(s.notices) > 0)
}

// Read is what the model gets from reading a task.
type Read struct {
	Info
	// New is the output since the last read; Lost the bytes of it that
	// fell off the front of what is kept before they were read.
	New  string
	Lost int64
}

// Read returns a task with the output it printed since the last read,
// and moves the read cursor to its end. Reading a settled task counts its
// result as seen.
func (s *Set) Read(id string) (Read, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byID[id]
	if !ok {
		return Read{}, s.noTaskLocked(id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Read{Info: t.infoLocked()}
	r.New, r.Lost = t.out.since(t.readAt)
	t.readAt = t.out.written
	if t.state.Settled() {
		s.markSeenLocked(t)
		s.dropNoticeLocked(id)
	}
	return r, nil
}

// Waited is the outcome of a wait.
type Waited struct {
	// Task is the task that settled, or the one waited for.
	Task Info
	// Settled is false when the wait timed out, or when nothing runs
	// (None).
	Settled bool
	// None: no task ran and none had settled unseen.
	None bool
}

// Wait waits up to timeout for task id to settle, or, with id "", for any
// task: one that settled since the model last heard of it is returned at
// once, else the next to settle; when nothing runs, Wait returns at once
// with None. A settled task returned counts as seen. The wait sleeps until
// a task settles (no polling); ctx ends it early with its error.
func (s *Set) Wait(ctx context.Context, id string, timeout time.Duration) (Waited, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		w, done, err := s.waitCheckLocked(id)
		ch := s.changed
		s.mu.Unlock()
		if err != nil || done {
			return w, err
		}
		select {
		case <-ch:
		case <-timer.C:
			s.mu.Lock()
			w, _, err := s.waitCheckLocked(id)
			s.mu.Unlock()
			return w, err
		case <-ctx.Done():
			return Waited{}, ctx.Err()
		}
	}
}

// waitCheckLocked looks for what Wait waits for; done reports a wait that
// is over.
func (s *Set) waitCheckLocked(id string) (w Waited, done bool, err error) {
	if id != "" {
		t, ok := s.byID[id]
		if !ok {
			return w, true, s.noTaskLocked(id)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		w.Task = t.infoLocked()
		if t.state.Settled() {
			w.Settled = true
			s.markSeenLocked(t)
			s.dropNoticeLocked(id)
			return w, true, nil
		}
		return w, false, nil
	}
	for _, t := range s.order {
		t.mu.Lock()
		unseen := t.state.Settled() && !t.seen
		if unseen {
			w = Waited{Task: t.infoLocked(), Settled: true}
			s.markSeenLocked(t)
		}
		t.mu.Unlock()
		if unseen {
			s.dropNoticeLocked(t.id)
			return w, true, nil
		}
	}
	if s.running == 0 {
		return Waited{None: true}, true, nil
	}
	return w, false, nil
}

// headOf returns at most n bytes from the start of s, on a character
// boundary, marked when cut.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := utf8cut.Prefix(s, n)
	return head + fmt.Sprintf("\n[… %d more bytes]", len(s)-len(head))
}

// tailOf returns at most n bytes from the end of s, marked when cut.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	p := utf8cut.TrimPartial(s[len(s)-n:])
	return fmt.Sprintf("[… %d bytes before]\n", len(s)-len(p)) + p
}
