package spawn_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

func TestResume_ContinuesTheFinishedChildsConversationInTheSameSession(t *testing.T) {
	ex := &st.Exposure{}
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Expose: ex, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "answer to " + st.LastUser(req)}
	})})
	first := start(t, p, subagents.StartRequest{Prompt: "one"})
	res1 := wait(t, first)
	next, err := first.(subagents.Resumable).Resume(t.Context(), "two")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Dispose()
	res2 := wait(t, next)
	if next.ID() != first.ID() || res2.ChildSessionID != res1.ChildSessionID {
		t.Fatalf("ids %q/%q sessions %q/%q", first.ID(), next.ID(), res1.ChildSessionID, res2.ChildSessionID)
	}
	if res2.Output != "answer to two" {
		t.Fatalf("output = %q", res2.Output)
	}
	reqs := rec.All()
	var contents []string
	for _, m := range reqs[1].Messages {
		contents = append(contents, m.Content)
	}
	if !slices.Equal(contents, []string{"one", "answer to one", "two"}) {
		t.Fatalf("the resumed child saw %q", contents)
	}
	// Disposing the first run keeps the child for the resumed one.
	first.Dispose()
	if _, ok := p.Registry.Get(next.ID()); !ok {
		t.Fatal("disposing the finished run closed the child its resumed run holds")
	}
	next.Dispose()
	if _, ok := p.Registry.Get(next.ID()); ok {
		t.Fatal("the child outlived its last run")
	}
	want := []string{
		"announce s_main/sa1 on s_main",
		"message s_main -> s_main/sa1: one",
		"state s_main/sa1 running",
		"state s_main/sa1 idle completed",
		"message s_main -> s_main/sa1: two",
		"state s_main/sa1 running",
		"state s_main/sa1 idle completed",
		"forget s_main/sa1",
	}
	var got []string
	for _, l := range ex.Lines() {
		if l[:5] != "emit " {
			got = append(got, l)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("exposure calls = %q\nwant %q", got, want)
	}
}

func TestResume_IsRefusedWhileRunningOrAfterDispose(t *testing.T) {
	release := make(chan struct{})
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Block: release, Text: "ok"} })})
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	if _, err := run.(subagents.Resumable).Resume(t.Context(), "more"); err == nil {
		t.Fatal("resumed a running child")
	}
	close(release)
	wait(t, run)
	run.Dispose()
	if _, err := run.(subagents.Resumable).Resume(t.Context(), "more"); !errors.Is(err, subagents.ErrRunFinished) {
		t.Fatalf("resume after dispose: %v", err)
	}
}
