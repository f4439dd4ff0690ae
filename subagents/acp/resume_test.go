//go:build unix

package acpprovider_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

func resume(t *testing.T, run subagents.Run, prompt string) subagents.Run {
	t.Helper()
	next, err := run.(subagents.Resumable).Resume(t.Context(), prompt)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	t.Cleanup(func() { next.Dispose() })
	return next
}

func TestResume_ContinuesOnTheLiveConnection(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	parent := newParent(t, parentOpts{expose: exp})
	first := start(t, p, subagents.StartRequest{Prompt: "one", Parent: parent.Scope, Options: dshdBinding(t, "echo.json")})
	if res := wait(t, first); res.Output != "You said: one" {
		t.Fatalf("first = %+v", res)
	}
	second := resume(t, first, "two")
	res := wait(t, second)
	if res.Output != "You said: two" || res.ChildSessionID != "s_main/sa1" {
		t.Fatalf("second = %+v", res)
	}
	first.Dispose()
	// The child lives while the resumed run holds it.
	third := resume(t, second, "three")
	if res := wait(t, third); res.Output != "You said: three" {
		t.Fatalf("third = %+v", res)
	}
	second.Dispose()
	third.Dispose()
	lines := exp.Lines()
	var states []string
	for _, l := range lines {
		if strings.HasPrefix(l, "state ") || strings.HasPrefix(l, "announce ") || strings.HasPrefix(l, "forget ") {
			states = append(states, l)
		}
	}
	want := []string{"announce s_main/sa1 on s_main"}
	for range 3 { // one, two, three
		want = append(want, "state s_main/sa1 running", "state s_main/sa1 idle completed")
	}
	want = append(want, "forget s_main/sa1")
	if !slices.Equal(states, want) {
		t.Fatalf("states = %q", states)
	}
	checkNoProcesses(t)
}

func TestResume_RefusesARunningOrDisposedRun(t *testing.T) {
	p := newProvider(t, nil)
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "hang")
	if _, err := run.(subagents.Resumable).Resume(t.Context(), "more"); !errors.Is(err, subagents.ErrInvalidRequest) {
		t.Fatalf("Resume of a running run = %v", err)
	}
	run.Cancel()
	wait(t, run)
	run.Dispose()
	if _, err := run.(subagents.Resumable).Resume(t.Context(), "more"); !errors.Is(err, subagents.ErrRunFinished) {
		t.Fatalf("Resume of a disposed run = %v", err)
	}
}

func TestResume_OnANewConnectionAfterTheOldOneDied(t *testing.T) {
	p := newProvider(t, nil)
	cases := []struct {
		mode string
		want string
	}{
		{modeAgent, "echo: again"},    // session/resume
		{modeLoadOnly, "echo: again"}, // session/load, whose replay is not shown again
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			exp := &st.Exposure{}
			parent := newParent(t, parentOpts{expose: exp})
			first := start(t, p, subagents.StartRequest{Prompt: "exit 0", Parent: parent.Scope, Options: fakeBinding(tc.mode)})
			if res := wait(t, first); res.StopReason != subagents.StopError {
				t.Fatalf("first = %+v", res)
			}
			second := resume(t, first, "echo again")
			res := wait(t, second)
			if res.Output != tc.want || res.ChildSessionID != "s_main/sa1" {
				t.Fatalf("second = %+v", res)
			}
			for _, l := range exp.Lines() {
				if strings.Contains(l, "replayed") {
					t.Fatalf("the replay reached the editor: %s", l)
				}
			}
			first.Dispose()
			second.Dispose()
			checkNoProcesses(t)
		})
	}
	t.Run("an agent that cannot resume", func(t *testing.T) {
		parent := newParent(t, parentOpts{})
		first := start(t, p, subagents.StartRequest{Prompt: "exit 0", Parent: parent.Scope, Options: fakeBinding(modeNoResume)})
		wait(t, first)
		if _, err := first.(subagents.Resumable).Resume(t.Context(), "echo again"); !errors.Is(err, subagents.ErrRunFinished) {
			t.Fatalf("Resume = %v", err)
		}
		first.Dispose()
		checkNoProcesses(t)
	})
}
