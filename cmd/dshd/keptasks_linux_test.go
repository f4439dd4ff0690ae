// End-to-end test of --max-kept-tasks: a session remembers that many
// background tasks; the model asking for one forgotten beyond it is told
// so, naming the setting, and the first forgetting is logged.

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// allToolResults are all the tool results of a request, whatever user
// messages stand between them: a task's notice comes as one, at a moment
// the test does not set.
func allToolResults(c *openaitest.ChatRequest) []string {
	var out []string
	for _, m := range c.Messages {
		if m.Role == "tool" {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			out = append(out, s)
		}
	}
	return out
}

func TestBackground_ATaskForgottenBeyondMaxKeptTasksIsSaidToBeForgotten(t *testing.T) {
	ctx, cwd, _, srv := commandTest(t, "unused")
	steps := []openaitest.Reply{
		bgCommand("c1", "echo one"),
		call("c2", "task_wait", map[string]any{"id": "t1", "timeout": 60}),
		bgCommand("c3", "echo two"),
		call("c4", "task_wait", map[string]any{"id": "t2", "timeout": 60}),
		call("c5", "task_read", map[string]any{"id": "t1"}),
		call("c6", "task_read", map[string]any{"id": "t2"}),
	}
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if n := len(allToolResults(r.Chat)); n < len(steps) {
			return steps[n]
		}
		return openaitest.Text("done")
	})
	p, w, sid := bgDaemon{srv: srv, stateDir: t.TempDir(), args: []string{"--max-kept-tasks", "1"}}.open(ctx, t, cwd)
	w.endTurn(ctx, sid, "run two")
	reqs := srv.ChatRequests()
	got := allToolResults(reqs[len(reqs)-1])
	if len(got) != len(steps) {
		t.Fatalf("tool results %q", got)
	}
	if want := `task "t1" is forgotten: a session keeps its last 1 tasks (--max-kept-tasks)`; !strings.Contains(got[4], want) {
		t.Fatalf("reading the forgotten t1 gave %q, want %q", got[4], want)
	}
	if !containsAll(got[5], "two", "completed") {
		t.Fatalf("reading the kept t2 gave %q; the results: %q", got[5], got)
	}
	endsOnSIGTERM(ctx, t, p)
	if log := p.stderr.String(); strings.Count(log, "forgetting the oldest settled background tasks") != 1 || !strings.Contains(log, "setting=--max-kept-tasks") {
		t.Fatalf("the forgetting is not logged once naming the setting:\n%s", log)
	}
}
