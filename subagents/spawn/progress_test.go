package spawn_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

type progressLog struct {
	mu  sync.Mutex
	all []subagents.Progress
}

func (l *progressLog) add(p subagents.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

func (l *progressLog) list() []subagents.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]subagents.Progress(nil), l.all...)
}

func TestProgress_WithoutExposureTheChildShowsAsABoundedSummaryEndingWithAFinalOne(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: twoStep})
	noop(t, p.Tools)
	log := &progressLog{}
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x", Progress: log.add}))
	got := log.list() // the final summary is sent before Wait returns
	if len(got) == 0 {
		t.Fatal("no progress")
	}
	final := got[len(got)-1]
	if final.Text != "working\n\ndone" {
		t.Errorf("text = %q", final.Text)
	}
	if len(final.Tools) != 1 || final.Tools[0] != "noop (done)" {
		t.Errorf("tools = %q", final.Tools)
	}
	if final.Usage.TotalTokens != 15 {
		t.Errorf("usage = %+v", final.Usage)
	}
	if res.ChildSessionID != "" {
		t.Errorf("an unexposed child has a session id %q", res.ChildSessionID)
	}
}

func TestProgress_TheSummaryStaysBoundedHoweverMuchTheChildDoes(t *testing.T) {
	long := strings.Repeat("é", 3000) + "THE END"
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if len(st.ToolResults(req)) > 0 {
			return st.Reply{Text: long}
		}
		var calls []llm.ToolCall
		for i := range 50 {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprint(i), Name: "noop", Arguments: "{}"})
		}
		return st.Reply{ToolCalls: calls}
	})})
	noop(t, p.Tools)
	log := &progressLog{}
	wait(t, start(t, p, subagents.StartRequest{Prompt: "x", Progress: log.add}))
	got := log.list()
	final := got[len(got)-1]
	if len(final.Text) > 2000 || !strings.HasSuffix(final.Text, "THE END") || !strings.HasPrefix(final.Text, "é") {
		t.Errorf("text is %d bytes, ends %q", len(final.Text), final.Text[len(final.Text)-10:])
	}
	if len(final.Tools) != 21 || final.Tools[0] != "30 earlier tool calls" || final.Tools[20] != "noop (done)" {
		t.Errorf("tools = %q", final.Tools)
	}
	for _, pr := range got {
		if len(pr.Text) > 2000 || len(pr.Tools) > 21 {
			t.Fatalf("an unbounded summary was sent: %d bytes, %d tools", len(pr.Text), len(pr.Tools))
		}
	}
}

func TestProgress_AnExposedChildSendsNoFallbackProgress(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: twoStep, Expose: &st.Exposure{}})
	noop(t, p.Tools)
	log := &progressLog{}
	wait(t, start(t, p, subagents.StartRequest{Prompt: "x", Progress: log.add}))
	if n := len(log.list()); n != 0 {
		t.Fatalf("%d progress reports for an exposed child", n)
	}
}

func TestSteer_SendMessageReachesTheRunningChild(t *testing.T) {
	first := make(chan struct{}, 1)
	release := make(chan struct{})
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		if len(st.ToolResults(req)) == 0 && st.LastUser(req) == "x" {
			first <- struct{}{}
			return st.Reply{Block: release, ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}}
		}
		return st.Reply{Text: "done"}
	})})
	noop(t, p.Tools)
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	steer, ok := run.(subagents.Steerable)
	if !ok {
		t.Fatal("a spawn run is not steerable")
	}
	result := collect(t, run)
	st.Recv(t, first)
	if err := steer.SendMessage(t.Context(), "also check the tests"); err != nil {
		t.Fatal(err)
	}
	close(release)
	st.Recv(t, result)
	reqs := rec.All()
	if got := st.LastUser(reqs[len(reqs)-1]); got != "also check the tests" {
		t.Fatalf("the model's last user message = %q", got)
	}
	if err := steer.SendMessage(t.Context(), "late"); err == nil {
		t.Fatal("steering a finished run succeeded")
	}
}
