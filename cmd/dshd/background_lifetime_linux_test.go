// End-to-end tests of background work (issue 13), continued: a task that
// settles while the turn that started it still runs, the limits a daemon's
// settings set, a daemon stopped with tasks running, and an acp child
// continued after a restart through its agent's session.

package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

func TestBackground_ATaskThatSettlesDuringTheTurnIsNoticedInTheTurnsNextModelCall(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "gate")
	stateDir := t.TempDir()
	settled := make(chan struct{}) // closed once the journal says t1 completed
	var once sync.Once
	var rec recorder
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if strings.HasPrefix(c.LastUserText(), "Background task t1") {
			rec.add("noticed", c)
			return openaitest.Text("noticed")
		}
		switch len(sinceUser(c)) {
		case 0:
			return bgCommand("c1", "echo started; read x < "+fifo+"; echo $((3*3))-done")
		case 1:
			// The command ends while this model call runs; the next one
			// must carry the notice, with no tool call asking for it.
			once.Do(func() { release(t, fifo) })
			select {
			case <-settled:
			case <-ctx.Done():
			}
			return call("c2", "list_dir", map[string]any{"path": "."})
		}
		return openaitest.Text("no notice came")
	})
	p, w, sid := bgDaemon{srv: srv, stateDir: stateDir}.open(ctx, t, cwd)
	answer := w.promptAsync(sid, "go")
	waitJournal(ctx, t, journalPath(stateDir, sid), `"k":"task"`, `"id":"t1"`, `"state":"completed"`)
	close(settled)
	if stop := stopReason(ctx, t, answer); stop != "end_turn" {
		t.Fatalf("stop %q; stderr:\n%s", stop, p.stderr)
	}
	got := rec.get("noticed")
	if len(got) != 1 {
		t.Fatalf("%d model calls carried the notice; the turn said %q", len(got), text(w.updates(sid)))
	}
	notice := got[0].LastUserText()
	if !containsAll(notice, "Background task t1 (command: echo started;", "completed", "exit code 0", `task_read with id "t1"`) {
		t.Errorf("the notice:\n%s", notice)
	}
	// In the same turn: the call after the list_dir result, before the
	// turn's answer.
	if res := sinceUser(&openaitest.ChatRequest{Messages: got[0].Messages[:len(got[0].Messages)-1]}); len(res) != 2 {
		t.Errorf("the notice follows %d tool results of the turn, want 2 (run_command, list_dir)", len(res))
	}
	if !shownAsToolCall(w, sid, "Task t1 completed: echo started;") {
		t.Error("the editor was not shown the notice as a tool call of the turn")
	}
}

func TestBackground_TheDaemonsSettingsLimitTheTasksAndTheOutputEachKeeps(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "gate")
	var once sync.Once
	srv.Handle(turnSteps(
		always(calls(bgCommand("c1", "echo begin; read x < "+fifo+"; seq 1 2000"), bgCommand("c2", "echo second"))),
		nil, // both starts are answered in one step
		func() openaitest.Reply {
			once.Do(func() { release(t, fifo) })
			return call("c3", "task_wait", map[string]any{"id": "t1", "timeout": 60})
		},
	))
	p, got := bgDaemon{srv: srv, stateDir: t.TempDir(), args: []string{"--max-tasks", "1", "--task-output-limit", "1024"}}.turnResults(ctx, t, cwd, "go", 3)
	if !containsAll(got[0], "Started background task t1", "begin") {
		t.Errorf("the first start:\n%s", got[0])
	}
	if !containsAll(got[1], "cannot start the command in the background", "1 background task is already running, the most a session may run at once") {
		t.Errorf("the start over --max-tasks:\n%s", got[1])
	}
	if !containsAll(got[2], "completed", "only the last 1024 bytes of its output are kept", "\n2000\n") || strings.Contains(got[2], "\nbegin\n") {
		t.Errorf("the output over --task-output-limit:\n%s", got[2])
	}
	if _, err := p.stderr.waitFor(ctx, "background task limit reached", "setting=--max-tasks", "limit=1"); err != nil {
		t.Errorf("the limit was not logged: %v\n%s", err, p.stderr)
	}
}

func TestBackground_StoppingTheDaemonInterruptsItsTasksAndEndsTheirProcesses(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "never")
	stateDir := t.TempDir()
	child := newHeldChild(t)
	srv.Handle(child.script("start", calls(bgCommand("p1", "sh -c 'sleep 300 & read x < "+fifo+"'"), startChild("p2", "bg", "child work")), "ok"))
	d := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bg=spawn,background"}}
	a, wa, sid := d.open(ctx, t, cwd)
	wa.endTurn(ctx, sid, "start")
	<-child.in
	below := testkit.Descendants(t, a.cmd.Process.Pid)
	if len(below) < 2 {
		t.Fatalf("%d processes below dshd, want the command's", len(below))
	}
	a.stop(t)
	for pid, info := range below {
		waitExit(ctx, t, pid)
		if !testkit.Ended(pid) {
			t.Errorf("process %d (%s) outlived the daemon", pid, info.Comm)
		}
	}
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"interrupted"`)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t2"`, `"state":"interrupted"`)

	_, wb := d.load(ctx, t, sid, cwd)
	if list := promptText(ctx, wb, sid, "/tasks"); !containsAll(list, "t1 command, interrupted", "t2 subagent, interrupted") {
		t.Fatalf("/tasks after the stop:\n%s", list)
	}
}

func TestBackground_AfterARestartASettledACPChildIsContinuedThroughItsAgentsSession(t *testing.T) {
	ctx := testkit.Context(t)
	stateDir, cwd := t.TempDir(), t.TempDir()
	srv := fakeModel(t)
	s := &continueScript{tool: "bgacp", more: "go on"}
	srv.Handle(s.handle)
	d := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bgacp=acp,background"}}
	a, wa, sid := d.open(ctx, t, cwd)
	wa.prompt(ctx, sid, "start")
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`, `"snapshot"`)
	b, wb := d.crashAndLoad(ctx, t, a, sid, cwd) // the child dshd dies with the first
	wb.endTurn(ctx, sid, "go on")
	if res := s.rec.get("continued"); len(res) != 1 || !containsAll(strings.Join(sinceUser(res[0]), "\n"), "Task t1 is running again") {
		t.Fatalf("task_continue after the restart was not followed by one model call that has its result; stderr:\n%s", b.stderr)
	}
	waitContinued(ctx, t, journal, "t1", &s.rec, b.stderr)
}
