// This file folds a child's events into the bounded progress summary shown
// in the parent's tool call when the editor does not see the child.

package inproc

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

// Bounds of the summary: it is resent whole each time, so it stays small.
const (
	maxProgressText  = 2000 // bytes of message text, the tail kept
	maxProgressTools = 20   // tool lines shown, the latest kept
)

// progressSink keeps the summary and sends it at most once per interval
// (the first change at once, later ones batched), plus a final one.
type progressSink struct {
	fn       func(subagents.Progress)
	interval time.Duration

	sendMu sync.Mutex // orders sends: a late timer never sends after finish

	mu      sync.Mutex
	text    []byte
	msgID   string
	tools   []toolLine
	byID    map[string]int
	dropped int
	usage   llm.Usage
	last    time.Time
	dirty   bool
	armed   bool
	timer   *time.Timer
	closed  bool
	timers  sync.WaitGroup
}

type toolLine struct {
	id, title string
	status    agent.ToolStatus
}

func newProgressSink(fn func(subagents.Progress), interval time.Duration) *progressSink {
	return &progressSink{fn: fn, interval: interval, byID: make(map[string]int)}
}

// observe folds ev into the summary and sends it if the interval allows,
// or arms a timer to send it when it does.
func (s *progressSink) observe(ev agent.Event) {
	s.mu.Lock()
	if !s.fold(ev) {
		s.mu.Unlock()
		return
	}
	s.dirty = true
	wait := s.interval - time.Since(s.last)
	if wait <= 0 {
		s.mu.Unlock()
		s.flush()
		return
	}
	if !s.armed {
		s.armed = true
		s.timers.Add(1)
		s.timer = time.AfterFunc(wait, s.fire)
	}
	s.mu.Unlock()
}

// fold applies ev; it reports whether the summary changed. mu is held.
func (s *progressSink) fold(ev agent.Event) bool {
	switch e := ev.(type) {
	case agent.MessageChunk:
		if e.MessageID != s.msgID && len(s.text) > 0 {
			s.text = append(s.text, "\n\n"...)
		}
		s.msgID = e.MessageID
		s.text = append(s.text, e.Text...)
		if len(s.text) > 2*maxProgressText {
			s.text = append([]byte(nil), tail(s.text, maxProgressText)...)
		}
	case agent.ToolCallStarted:
		title := e.Title
		if title == "" {
			title = e.Name
		}
		s.byID[e.ID] = len(s.tools) + s.dropped
		s.tools = append(s.tools, toolLine{id: e.ID, title: title, status: agent.ToolPending})
		if len(s.tools) > 2*maxProgressTools {
			n := len(s.tools) - maxProgressTools
			for _, t := range s.tools[:n] {
				delete(s.byID, t.id)
			}
			s.dropped += n
			s.tools = append([]toolLine(nil), s.tools[n:]...)
		}
	case agent.ToolCallUpdated:
		i, ok := s.byID[e.ID]
		if !ok {
			return false
		}
		t := &s.tools[i-s.dropped]
		if e.Title != "" {
			t.title = e.Title
		}
		if e.Status == "" || e.Status == t.status {
			return e.Title != ""
		}
		t.status = e.Status
	case agent.UsageUpdated:
		s.usage.Add(e.Call)
	default:
		return false
	}
	return true
}

func (s *progressSink) fire() {
	defer s.timers.Done()
	s.mu.Lock()
	s.armed = false
	s.mu.Unlock()
	s.flush()
}

func (s *progressSink) flush() {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.closed || !s.dirty {
		s.mu.Unlock()
		return
	}
	p := s.snapshot()
	s.dirty = false
	s.last = time.Now()
	s.mu.Unlock()
	s.fn(p)
}

// finish stops the timer, waits for one that already fired, and sends the
// final summary. Nothing is sent after it.
func (s *progressSink) finish() {
	s.mu.Lock()
	if s.armed && s.timer.Stop() {
		s.armed = false
		s.timers.Done()
	}
	s.mu.Unlock()
	s.timers.Wait()
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	s.closed = true
	p := s.snapshot()
	s.mu.Unlock()
	s.fn(p)
}

// snapshot builds the bounded summary. mu is held.
func (s *progressSink) snapshot() subagents.Progress {
	p := subagents.Progress{Text: string(tail(s.text, maxProgressText)), Usage: s.usage}
	shown := s.tools
	hidden := s.dropped
	if len(shown) > maxProgressTools {
		hidden += len(shown) - maxProgressTools
		shown = shown[len(shown)-maxProgressTools:]
	}
	if hidden > 0 {
		p.Tools = append(p.Tools, plural(hidden, "earlier tool call"))
	}
	for _, t := range shown {
		p.Tools = append(p.Tools, t.title+" ("+statusWord(t.status)+")")
	}
	return p
}

func statusWord(st agent.ToolStatus) string {
	switch st {
	case agent.ToolInProgress:
		return "running"
	case agent.ToolCompleted:
		return "done"
	case agent.ToolFailed:
		return "failed"
	}
	return "pending"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// tail returns at most n bytes from the end of b, starting on a character
// boundary.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := len(b) - n
	for i < len(b) && !utf8.RuneStart(b[i]) {
		i++
	}
	return b[i:]
}
