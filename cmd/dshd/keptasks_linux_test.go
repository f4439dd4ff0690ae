// End-to-end test of --max-kept-tasks: a session remembers that many
// background tasks; the model asking for one forgotten beyond it is told
// so, naming the setting, and the first forgetting is logged.

package main

import (
	"strings"
	"testing"
)

func TestBackground_ATaskForgottenBeyondMaxKeptTasksIsSaidToBeForgotten(t *testing.T) {
	ctx, cwd, _, srv := commandTest(t, "unused")
	srv.Handle(turnSteps(
		always(bgCommand("c1", "echo one")),
		always(call("c2", "task_wait", map[string]any{"id": "t1", "timeout": 60})),
		always(bgCommand("c3", "echo two")),
		always(call("c4", "task_wait", map[string]any{"id": "t2", "timeout": 60})),
		always(call("c5", "task_read", map[string]any{"id": "t1"})),
		always(call("c6", "task_read", map[string]any{"id": "t2"})),
	))
	p, got := bgDaemon{srv: srv, stateDir: t.TempDir(), args: []string{"--max-kept-tasks", "1"}}.turnResults(ctx, t, cwd, "run two", 6)
	if want := `task "t1" is forgotten: a session keeps its last 1 tasks (--max-kept-tasks)`; !strings.Contains(got[4], want) {
		t.Fatalf("reading the forgotten t1 gave %q, want %q", got[4], want)
	}
	if !containsAll(got[5], "two", "completed") {
		t.Fatalf("reading the kept t2 gave %q", got[5])
	}
	endsOnSIGTERM(ctx, t, p)
	if log := p.stderr.String(); strings.Count(log, "forgetting the oldest settled background tasks") != 1 || !strings.Contains(log, "setting=--max-kept-tasks") {
		t.Fatalf("the forgetting is not logged once naming the setting:\n%s", log)
	}
}
