// This file folds a child's session updates into the bounded progress
// summary shown in the parent's tool call when the editor does not see
// the child as a session of its own.

package acpprovider

import (
	"strconv"
	"sync"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents"
)

// Bounds of the summary; it is resent whole each time.
const (
	maxProgressText  = 2000
	maxProgressTools = 20
)

// progressSink keeps the summary and sends it at most once per interval:
// the first change at once, later ones batched by one timer, and a final
// one when the run ends.
type progressSink struct {
	fn       func(subagents.Progress)
	interval time.Duration

	sendMu sync.Mutex // orders sends; nothing is sent after finish

	mu     sync.Mutex
	text   []byte
	msgID  acp.MessageID
	tools  []toolLine
	byID   map[acp.ToolCallID]int // index into tools, offset by dropped
	hidden int                    // tool lines dropped from the front
	last   time.Time
	dirty  bool
	timer  *time.Timer
	armed  bool
	closed bool
	timers sync.WaitGroup
}

type toolLine struct {
	id     acp.ToolCallID
	title  string
	status acp.ToolCallStatus
}

func newProgressSink(fn func(subagents.Progress), interval time.Duration) *progressSink {
	return &progressSink{fn: fn, interval: interval, byID: map[acp.ToolCallID]int{}}
}

// observe folds u in and sends or schedules the summary.
func (s *progressSink) observe(u acp.SessionUpdate) {
	s.mu.Lock()
	if s.closed || !s.fold(u) {
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

// fold applies u; it reports whether the summary changed. mu is held.
func (s *progressSink) fold(u acp.SessionUpdate) bool {
	switch u := u.(type) {
	case *acp.AgentMessageChunk:
		t, ok := u.Content.(*acp.TextContent)
		if !ok || t.Text == "" {
			return false
		}
		if u.MessageID != s.msgID && len(s.text) > 0 {
			s.text = append(s.text, "\n\n"...)
		}
		s.msgID = u.MessageID
		s.text = append(s.text, t.Text...)
		if len(s.text) > 2*maxProgressText {
			s.text = []byte(tailString(string(s.text), maxProgressText))
		}
	case *acp.ToolCall:
		s.byID[u.ToolCallID] = len(s.tools) + s.hidden
		status := u.Status
		if status == "" {
			status = acp.ToolCallStatusPending
		}
		s.tools = append(s.tools, toolLine{id: u.ToolCallID, title: u.Title, status: status})
		if len(s.tools) > 2*maxProgressTools {
			n := len(s.tools) - maxProgressTools
			for _, t := range s.tools[:n] {
				delete(s.byID, t.id)
			}
			s.hidden += n
			s.tools = append([]toolLine(nil), s.tools[n:]...)
		}
	case *acp.ToolCallUpdate:
		i, ok := s.byID[u.ToolCallID]
		if !ok {
			return false
		}
		t := &s.tools[i-s.hidden]
		changed := false
		if u.Title != "" && u.Title != t.title {
			t.title, changed = u.Title, true
		}
		if u.Status != "" && u.Status != t.status {
			t.status, changed = u.Status, true
		}
		return changed
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

// finish stops the timer and sends the final summary; nothing follows it.
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
	p := subagents.Progress{Text: tailString(string(s.text), maxProgressText)}
	shown, hidden := s.tools, s.hidden
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

func statusWord(st acp.ToolCallStatus) string {
	switch st {
	case acp.ToolCallStatusInProgress:
		return "running"
	case acp.ToolCallStatusCompleted:
		return "done"
	case acp.ToolCallStatusFailed:
		return "failed"
	}
	return "pending"
}

// tailString returns at most n bytes from the end of s, starting on a
// character boundary.
func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	var t tailBuffer
	t.limit = n
	t.Write([]byte(s))
	return t.String()
}
