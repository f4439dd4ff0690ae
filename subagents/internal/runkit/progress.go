// This file folds a child's events into the bounded progress summary shown
// in the parent's tool call when the editor does not see the child.

package runkit

import (
	"strconv"
	"sync"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/subagents"
)

// Bounds of the summary: it is resent whole each time, so it stays small.
const (
	maxProgressText  = 2000 // bytes of message text, the tail kept
	maxProgressTools = 20   // tool lines shown, the latest kept
)

// ProgressSink keeps a child's progress summary and sends it at most once
// per interval: the first change at once, later ones batched by one timer,
// and a final one from Finish, after which nothing is sent. E is the type
// of the provider's events; the provider's fold function turns one into
// changes of the [Summary].
//
// Observe may be called from any goroutine, but not after Finish returned
// in a way that matters: such events are ignored.
type ProgressSink[E any] struct {
	send     func(subagents.Progress)
	fold     func(*Summary, E) bool
	interval time.Duration

	sendMu sync.Mutex // orders sends: a late timer never sends after Finish

	mu     sync.Mutex
	sum    Summary // guarded by mu
	last   time.Time
	dirty  bool
	armed  bool
	timer  *time.Timer
	closed bool
	timers sync.WaitGroup
}

// NewProgressSink returns a sink that sends summaries to send, at most one
// per interval, and folds each observed event with fold, which reports
// whether the summary changed.
func NewProgressSink[E any](send func(subagents.Progress), interval time.Duration, fold func(*Summary, E) bool) *ProgressSink[E] {
	return &ProgressSink[E]{send: send, fold: fold, interval: interval, sum: Summary{byID: make(map[string]int)}}
}

// Observe folds ev into the summary and sends it if the interval allows,
// or arms a timer to send it when it does.
func (s *ProgressSink[E]) Observe(ev E) {
	s.mu.Lock()
	if s.closed || !s.fold(&s.sum, ev) {
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

func (s *ProgressSink[E]) fire() {
	defer s.timers.Done()
	s.mu.Lock()
	s.armed = false
	s.mu.Unlock()
	s.flush()
}

func (s *ProgressSink[E]) flush() {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.closed || !s.dirty {
		s.mu.Unlock()
		return
	}
	p := s.sum.snapshot()
	s.dirty = false
	s.last = time.Now()
	s.mu.Unlock()
	s.send(p)
}

// Finish stops the timer, waits for one that already fired, and sends the
// final summary. Nothing is sent after it.
func (s *ProgressSink[E]) Finish() {
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
	p := s.sum.snapshot()
	s.mu.Unlock()
	s.send(p)
}

// Summary is what a [ProgressSink] folds events into: the tail of the
// child's message text, its latest tool calls with their states, and its
// usage. Its methods are called by the sink's fold function, under the
// sink's lock.
type Summary struct {
	text   []byte
	msgID  string
	tools  []toolLine
	byID   map[string]int // index into tools, offset by hidden
	hidden int            // tool lines dropped from the front
	usage  llm.Usage
}

type toolLine struct {
	id, title, status string
}

// AppendText adds text of the message messageID; a new message starts on
// a new paragraph.
func (m *Summary) AppendText(messageID, text string) {
	if messageID != m.msgID && len(m.text) > 0 {
		m.text = append(m.text, "\n\n"...)
	}
	m.msgID = messageID
	m.text = append(m.text, text...)
	if len(m.text) > 2*maxProgressText {
		m.text = append([]byte(nil), tail(m.text, maxProgressText)...)
	}
}

// StartTool adds a line for the tool call id. status is an ACP tool call
// status ("pending", "in_progress", "completed", "failed"); "" means
// pending.
func (m *Summary) StartTool(id, title, status string) {
	if status == "" {
		status = "pending"
	}
	m.byID[id] = len(m.tools) + m.hidden
	m.tools = append(m.tools, toolLine{id: id, title: title, status: status})
	if len(m.tools) > 2*maxProgressTools {
		n := len(m.tools) - maxProgressTools
		for _, t := range m.tools[:n] {
			delete(m.byID, t.id)
		}
		m.hidden += n
		m.tools = append([]toolLine(nil), m.tools[n:]...)
	}
}

// UpdateTool changes the title and the status of the tool call id where
// they are not "", and reports whether its line changed. An unknown or
// long-dropped call changes nothing.
func (m *Summary) UpdateTool(id, title, status string) bool {
	i, ok := m.byID[id]
	if !ok {
		return false
	}
	t := &m.tools[i-m.hidden]
	changed := false
	if title != "" && title != t.title {
		t.title, changed = title, true
	}
	if status != "" && status != t.status {
		t.status, changed = status, true
	}
	return changed
}

// AddUsage adds one model call's usage.
func (m *Summary) AddUsage(u llm.Usage) { m.usage.Add(u) }

// snapshot builds the bounded summary.
func (m *Summary) snapshot() subagents.Progress {
	p := subagents.Progress{Text: string(tail(m.text, maxProgressText)), Usage: m.usage}
	shown, hidden := m.tools, m.hidden
	if len(shown) > maxProgressTools {
		hidden += len(shown) - maxProgressTools
		shown = shown[len(shown)-maxProgressTools:]
	}
	if hidden == 1 {
		p.Tools = append(p.Tools, "1 earlier tool call")
	} else if hidden > 1 {
		p.Tools = append(p.Tools, strconv.Itoa(hidden)+" earlier tool calls")
	}
	for _, t := range shown {
		title := t.title
		if title == "" {
			title = "tool call"
		}
		p.Tools = append(p.Tools, title+" ("+statusWord(t.status)+")")
	}
	return p
}

func statusWord(status string) string {
	switch status {
	case "in_progress":
		return "running"
	case "completed":
		return "done"
	case "failed":
		return "failed"
	}
	return "pending"
}

// tail returns at most n bytes from the end of b, starting on a character
// boundary.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return utf8cut.TrimPartial(b[len(b)-n:])
}
