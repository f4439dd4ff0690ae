package runkit

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

// foldText folds a test event: text of message "m", or "" for no change.
func foldText(m *Summary, text string) bool {
	if text == "" {
		return false
	}
	m.AppendText("m", text)
	return true
}

func TestProgressSink_SendsAtOnceThenAtMostOncePerIntervalPlusAFinalOne(t *testing.T) {
	// Each step waits, then observes; "" is an event that changes nothing.
	type step struct {
		after time.Duration
		text  string
	}
	type send struct {
		at   time.Duration
		text string
	}
	script := []step{
		{0, "a"},                      // the first change goes at once
		{100 * time.Millisecond, "b"}, // batched...
		{100 * time.Millisecond, "c"}, // ...with b, sent when the interval is up
		{2 * time.Second, "d"},        // long after the last send: at once
		{0, ""},                       // no change: nothing
		{100 * time.Millisecond, "e"}, // arms the timer, which Finish stops
	}
	want := []send{{0, "a"}, {time.Second, "abc"}, {2200 * time.Millisecond, "abcd"}, {2300 * time.Millisecond, "abcde"}}

	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []send
		t0 := time.Now()
		s := NewProgressSink(func(p subagents.Progress) {
			mu.Lock()
			got = append(got, send{time.Since(t0), p.Text})
			mu.Unlock()
		}, time.Second, foldText)
		for _, st := range script {
			time.Sleep(st.after)
			synctest.Wait()
			s.Observe(st.text)
		}
		s.Finish()
		s.Observe("late") // after Finish: ignored
		time.Sleep(5 * time.Second)
		synctest.Wait() // a timer that was armed never sends now
		mu.Lock()
		defer mu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("sent %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("sent %v, want %v", got, want)
			}
		}
	})
}

// toolEvent drives the summary's tool and usage methods in tests.
type toolEvent struct {
	start         bool
	id, title, st string
	usage         int64
}

func foldTool(m *Summary, ev toolEvent) bool {
	switch {
	case ev.usage > 0:
		m.AddUsage(llm.Usage{InputTokens: ev.usage})
		return true
	case ev.start:
		m.StartTool(ev.id, ev.title, ev.st)
		return true
	}
	return m.UpdateTool(ev.id, ev.title, ev.st)
}

func TestSummary_ToolLinesFollowTheirCallsAndStayBounded(t *testing.T) {
	var last subagents.Progress
	var sends int
	s := NewProgressSink(func(p subagents.Progress) { last = p; sends++ }, time.Hour, foldTool)
	s.Observe(toolEvent{start: true, id: "1", title: "Read a.go"})
	s.Observe(toolEvent{start: true, id: "2", st: "in_progress"})
	s.Observe(toolEvent{id: "1", st: "completed", title: "Read a.go (40 lines)"})
	s.Observe(toolEvent{id: "2", st: "failed"})
	s.Observe(toolEvent{id: "unknown", st: "failed"})
	s.Observe(toolEvent{usage: 7})
	s.Finish()
	if want := []string{"Read a.go (40 lines) (done)", "tool call (failed)"}; strings.Join(last.Tools, "|") != strings.Join(want, "|") {
		t.Fatalf("tools = %q, want %q", last.Tools, want)
	}
	if last.Usage.InputTokens != 7 || sends != 2 {
		t.Fatalf("usage %+v after %d sends", last.Usage, sends)
	}

	s = NewProgressSink(func(p subagents.Progress) { last = p }, time.Hour, foldTool)
	for i := range 100 {
		s.Observe(toolEvent{start: true, id: strconv.Itoa(i), title: "t" + strconv.Itoa(i)})
	}
	s.Observe(toolEvent{id: "99", st: "completed"})
	s.Observe(toolEvent{id: "3", st: "completed"}) // long dropped: no change
	s.Finish()
	if len(last.Tools) != maxProgressTools+1 || last.Tools[0] != "80 earlier tool calls" || last.Tools[maxProgressTools] != "t99 (done)" {
		t.Fatalf("tools = %q", last.Tools)
	}
}

func TestSummary_TextKeepsItsTailOnACharacterBoundary(t *testing.T) {
	var m Summary
	m.AppendText("1", "first")
	m.AppendText("2", "second")
	if got := m.snapshot().Text; got != "first\n\nsecond" {
		t.Fatalf("text = %q", got)
	}
	m.AppendText("2", strings.Repeat("é", 3000))
	got := m.snapshot().Text
	if len(got) > maxProgressText || !strings.HasPrefix(got, "é") || !strings.HasSuffix(got, "é") {
		t.Fatalf("text is %d bytes and starts %q", len(got), got[:4])
	}
}
