package inproc

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/subagents"
)

func TestProgress_SentAtOnceThenAtMostOncePerIntervalPlusAFinalOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []time.Duration
		var texts []string
		t0 := time.Now()
		s := newProgressSink(func(p subagents.Progress) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, time.Since(t0))
			texts = append(texts, p.Text)
		}, time.Second)
		chunk := func(text string) { s.observe(agent.MessageChunk{MessageID: "m", Text: text}) }

		chunk("a") // at once
		time.Sleep(100 * time.Millisecond)
		chunk("b") // batched
		time.Sleep(100 * time.Millisecond)
		chunk("c") // batched with b, sent at 1s
		time.Sleep(2 * time.Second)
		synctest.Wait()
		chunk("d") // more than an interval later: at once
		s.observe(agent.ThoughtChunk{Text: "ignored"})
		s.finish()

		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{0, time.Second, 2200 * time.Millisecond, 2200 * time.Millisecond}
		wantText := []string{"a", "abc", "abcd", "abcd"}
		if len(sent) != len(want) {
			t.Fatalf("sent at %v, want %v", sent, want)
		}
		for i := range want {
			if sent[i] != want[i] || texts[i] != wantText[i] {
				t.Fatalf("sent %v %q, want %v %q", sent, texts, want, wantText)
			}
		}
	})
}

func TestProgress_NothingIsSentAfterFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var n int
		s := newProgressSink(func(subagents.Progress) { mu.Lock(); n++; mu.Unlock() }, time.Second)
		s.observe(agent.MessageChunk{MessageID: "m", Text: "a"})
		s.observe(agent.MessageChunk{MessageID: "m", Text: "b"}) // arms the timer
		s.finish()                                               // stops it
		time.Sleep(5 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if n != 2 {
			t.Fatalf("%d sends, want the first and the final", n)
		}
	})
}

func TestProgress_ToolLinesFollowTheirCalls(t *testing.T) {
	var last subagents.Progress
	s := newProgressSink(func(p subagents.Progress) { last = p }, time.Hour)
	s.observe(agent.ToolCallStarted{ID: "1", Name: "read_file", Title: "Read a.go"})
	s.observe(agent.ToolCallStarted{ID: "2", Name: "grep"})
	s.observe(agent.ToolCallUpdated{ID: "1", Status: agent.ToolInProgress})
	s.observe(agent.ToolCallUpdated{ID: "2", Status: agent.ToolFailed})
	s.observe(agent.ToolCallUpdated{ID: "1", Status: agent.ToolCompleted, Title: "Read a.go (40 lines)"})
	s.finish()
	if len(last.Tools) != 2 || last.Tools[0] != "Read a.go (40 lines) (done)" || last.Tools[1] != "grep (failed)" {
		t.Fatalf("tools = %q", last.Tools)
	}
}
