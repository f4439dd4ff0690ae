//go:build unix

package acpprovider_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

func TestRun_AChildDshdOnStdioAnswersAndLeavesNothingBehind(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	progress := newProgressLog()
	run, err := p.Start(t.Context(), subagents.StartRequest{
		Prompt:   "check the build",
		Parent:   parent.Scope,
		Options:  dshdBinding(t, "echo.json"),
		Progress: progress.report,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "You said: check the build" {
		t.Fatalf("result = %+v", res)
	}
	if res.LastMessage == nil || res.LastMessage.Content != res.Output {
		t.Fatalf("last message = %+v", res.LastMessage)
	}
	if got := progress.last().Text; got != "You said: check the build" {
		t.Fatalf("final progress = %q", got)
	}
	if err := run.Dispose(); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if err := run.Dispose(); err != nil {
		t.Fatalf("second Dispose: %v", err)
	}
	checkNoProcesses(t)
}

func TestRun_TheServiceReportsStartAndEnd(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run, events := startObserved(t, p, parent, subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: dshdBinding(t, "echo.json")})
	if res := wait(t, run); res.Output != "You said: hi" {
		t.Fatalf("result = %+v", res)
	}
	for _, want := range []subagents.EventKind{subagents.EventStart, subagents.EventEnd} {
		nextEvent(t, events, want)
	}
	if _, ok := run.(subagents.Resumable); !ok {
		t.Fatal("the tracked run lost Resumable")
	}
}

func TestStart_RefusesWhatItCannotDo(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{Agents: map[string]acpprovider.AgentConfig{"rel": {Cwd: "relative"}}})
	parent := newParent(t, parentOpts{})
	one := 1
	cases := []struct {
		name string
		req  subagents.StartRequest
		want error
	}{
		{"a tool filter cannot be enforced in another agent", subagents.StartRequest{Prompt: "x", ToolFilter: &subagents.ToolFilter{Allow: []string{"read_file"}}}, subagents.ErrUnsupportedCapability},
		{"an unknown option is a mistake", subagents.StartRequest{Prompt: "x", Options: map[string]string{"comand": "x"}}, subagents.ErrInvalidRequest},
		{"an unknown agent is named", subagents.StartRequest{Prompt: "x", Options: map[string]string{"agent": "nope"}}, subagents.ErrInvalidRequest},
		{"a relative cwd is refused", subagents.StartRequest{Prompt: "x", Options: map[string]string{"agent": "rel"}}, subagents.ErrInvalidRequest},
		{"a bad address is refused", subagents.StartRequest{Prompt: "x", Options: map[string]string{"address": "udp:x"}}, subagents.ErrInvalidRequest},
		{"a bad timeout is refused", subagents.StartRequest{Prompt: "x", Options: map[string]string{"timeout": "soon"}}, subagents.ErrInvalidRequest},
		{"a bad schema is refused", subagents.StartRequest{Prompt: "x", OutputSchema: []byte(`{"type": 3}`)}, subagents.ErrInvalidRequest},
		{"no parent", subagents.StartRequest{Prompt: "x"}, subagents.ErrInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "no parent" {
				tc.req.Parent = parent.Scope
			}
			_, err := p.Start(t.Context(), tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Start = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("the depth limit holds before anything starts", func(t *testing.T) {
		deep := newParent(t, parentOpts{depth: 2, max: 2})
		_, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "x", Parent: deep.Scope, DepthLimit: &one})
		if !errors.Is(err, subagents.ErrDepthLimit) {
			t.Fatalf("Start = %v", err)
		}
	})
	checkNoProcesses(t)
}

func TestRun_OutputIsTheLastMessageWithText(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, fakeBinding(modeAgent), "chunks first|second|third")
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "third" {
		t.Fatalf("result = %+v", res)
	}
	// Without an editor view, the parent's tool call shows the child's
	// messages and its tool calls with their status.
	last := progress.last()
	if last.Text != "firstsecondthird" || strings.Join(last.Tools, "; ") != "step 1 (done); step 2 (done)" {
		t.Fatalf("progress = %+v", last)
	}
}

func TestRun_OutputSchemaValidatesTheFinalText(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	schema := []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	t.Run("a valid answer is structured", func(t *testing.T) {
		run := start(t, p, subagents.StartRequest{Prompt: `chunks {"n": 3}`, Parent: parent.Scope, Options: fakeBinding(modeAgent), OutputSchema: schema})
		res := wait(t, run)
		if res.StopReason != subagents.StopCompleted || string(res.Structured) != `{"n": 3}` {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("an invalid answer gets one corrective turn, which it uses", func(t *testing.T) {
		run := start(t, p, subagents.StartRequest{Prompt: `answers {"n": "three"} || {"n": 3}`, Parent: parent.Scope, Options: fakeBinding(modeAgent), OutputSchema: schema})
		res := wait(t, run)
		if res.StopReason != subagents.StopCompleted || string(res.Structured) != `{"n": 3}` {
			t.Fatalf("result = %+v", res)
		}
		if res.Usage.TotalTokens != 1400 {
			t.Fatalf("usage over both turns = %d tokens, want the 1400 the context grew by", res.Usage.TotalTokens)
		}
	})
	t.Run("an answer invalid twice is an error", func(t *testing.T) {
		run := start(t, p, subagents.StartRequest{Prompt: `answers {"n": "three"} || {"n": "still three"}`, Parent: parent.Scope, Options: fakeBinding(modeAgent), OutputSchema: schema})
		res := wait(t, run)
		if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "does not match the output schema, also after it was told why") ||
			res.Output != `{"n": "still three"}` {
			t.Fatalf("result = %+v", res)
		}
	})
}

func TestMain_TheFakeAgentBinaryExists(t *testing.T) {
	if _, err := os.Stat(os.Args[0]); err != nil {
		t.Fatal(err)
	}
}

func TestRun_AChildsFailureKeepsItsReasonWhicheverFieldCarriesIt(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	for _, data := range []string{
		`"disk quota exceeded"`,
		`{"reason":"disk quota exceeded"}`,
		`{"details":"disk quota exceeded"}`,
		`{"error":"disk quota exceeded"}`,
		`{"message":"disk quota exceeded"}`,
	} {
		t.Run(data, func(t *testing.T) {
			run := start(t, p, subagents.StartRequest{Prompt: "fail " + data, Parent: parent.Scope, Options: fakeBinding(modeAgent)})
			res := wait(t, run)
			if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "disk quota exceeded") {
				t.Fatalf("result = %+v, want an error naming the child's reason", res)
			}
		})
	}
}

func TestRun_TheBindingsSystemPromptReachesTheAgentAsRenderedInstructions(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run := start(t, p, subagents.StartRequest{Prompt: "prompt", Parent: parent.Scope, Options: fakeBinding(modeAgent),
		SystemPrompt: "You review code in {{cwd}}.", Persona: "Be brief."})
	res := wait(t, run)
	want := "# Instructions for this task\n\nYou review code in " + parent.Scope.Cwd + ".\n\nBe brief.\n\n# Task\n\nprompt"
	if res.StopReason != subagents.StopCompleted || res.Output != want {
		t.Fatalf("the agent got %q, want %q", res.Output, want)
	}
	if _, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "x", Parent: parent.Scope, Options: fakeBinding(modeAgent), SystemPrompt: "{{nope}}"}); err == nil {
		t.Fatal("a system prompt that does not render started a child")
	}
}

// TestRun_UsageComesFromTheAgentsUsageUpdates: an agent whose prompt
// response has no usage still reports its context in usage_update; the
// run's usage is what the context grew by over the run, turn after turn.
func TestRun_UsageComesFromTheAgentsUsageUpdates(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run := start(t, p, subagents.StartRequest{Prompt: "used 1200 1500", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Usage.TotalTokens != 1500 {
		t.Fatalf("result = %+v, want 1500 tokens", res)
	}
	next, err := run.(subagents.Resumable).Resume(t.Context(), "used 1900 2100")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Dispose()
	if res := wait(t, next); res.Usage.TotalTokens != 600 {
		t.Fatalf("resumed result = %+v, want the 600 tokens the context grew by", res)
	}
}
