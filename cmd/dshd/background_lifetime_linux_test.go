// End-to-end tests of background work (issue 13), continued: a task that
// settles while the turn that started it still runs, the limits a daemon's
// settings set, a daemon stopped with tasks running, and an acp child
// continued after a restart through its agent's session.

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestBackground_ATaskThatSettlesDuringTheTurnIsNoticedInTheTurnsNextModelCall(t *testing.T) {
	needSandbox(t)
	ctx := testCtx(t)
	stateDir, cwd := t.TempDir(), t.TempDir()
	fifo := mkfifo(t, cwd, "gate")
	settled := make(chan struct{}) // closed once the journal says t1 completed
	srv := fakeModel(t)
	var once sync.Once
	var rec recorder
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if c == nil {
			return openaitest.Status(400)
		}
		if strings.HasPrefix(c.LastUserText(), "Background task t1") {
			rec.add("noticed", c)
			return openaitest.Text("noticed")
		}
		switch len(sinceUser(c)) {
		case 0:
			return call("c1", "run_command", map[string]any{"command": "echo started; read x < " + fifo + "; echo $((3*3))-done", "background": true})
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
	p := start(t, opts{}, daemonArgs(srv, stateDir)...)
	w := stdioWire(p)
	w.initialize(ctx, nil)
	sid := w.newSession(ctx, cwd)
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
	shown := false
	for _, n := range w.updates(sid) {
		var u struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		}
		if n.Kind == "tool_call" && json.Unmarshal(n.Update, &u) == nil && strings.HasPrefix(u.Title, "Task t1 completed: echo started;") {
			shown = true
		}
	}
	if !shown {
		t.Error("the editor was not shown the notice as a tool call of the turn")
	}
}

func TestBackground_TheDaemonsSettingsLimitTheTasksAndTheOutputEachKeeps(t *testing.T) {
	needSandbox(t)
	ctx := testCtx(t)
	cwd := t.TempDir()
	fifo := mkfifo(t, cwd, "gate")
	srv := fakeModel(t)
	var once sync.Once
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if r.Chat == nil {
			return openaitest.Status(400)
		}
		switch len(sinceUser(r.Chat)) {
		case 0:
			first, _ := json.Marshal(map[string]any{"command": "echo begin; read x < " + fifo + "; seq 1 2000", "background": true})
			second, _ := json.Marshal(map[string]any{"command": "echo second", "background": true})
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "c1", Name: "run_command", Arguments: string(first)},
				{ID: "c2", Name: "run_command", Arguments: string(second)},
			}}
		case 2:
			once.Do(func() { release(t, fifo) })
			return call("c3", "task_wait", map[string]any{"id": "t1", "timeout": 60})
		}
		return openaitest.Text("done")
	})
	p := start(t, opts{}, daemonArgs(srv, t.TempDir(), "--max-tasks", "1", "--task-output-limit", "1024")...)
	w := stdioWire(p)
	w.initialize(ctx, nil)
	sid := w.newSession(ctx, cwd)
	if stop := w.prompt(ctx, sid, "go"); stop != "end_turn" {
		t.Fatalf("stop %q; stderr:\n%s", stop, p.stderr)
	}
	reqs := srv.ChatRequests()
	got := sinceUser(reqs[len(reqs)-1])
	if len(got) != 3 {
		t.Fatalf("tool results %q", got)
	}
	if !containsAll(got[0], "Started background task t1", "begin") {
		t.Errorf("the first start:\n%s", got[0])
	}
	if !containsAll(got[1], "cannot start the command in the background", "1 background task is already running, the most a session may run at once") {
		t.Errorf("the start over --max-tasks:\n%s", got[1])
	}
	if !containsAll(got[2], "completed", "only the last 1024 bytes of its output are kept", "\n2000\n") || strings.Contains(got[2], "\nbegin\n") {
		t.Errorf("the output over --task-output-limit:\n%s", got[2])
	}
	if _, err := p.stderr.waitFor(ctx, "background task limit reached", "limit=1"); err != nil {
		t.Errorf("the limit was not logged: %v\n%s", err, p.stderr)
	}
}

func TestBackground_StoppingTheDaemonInterruptsItsTasksAndEndsTheirProcesses(t *testing.T) {
	needSandbox(t)
	ctx := testCtx(t)
	stateDir, cwd := t.TempDir(), t.TempDir()
	fifo := mkfifo(t, cwd, "never")
	srv := fakeModel(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	inModel := make(chan struct{})
	var once sync.Once
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if c == nil {
			return openaitest.Status(400)
		}
		if firstUser(c) == "CHILD-TASK" {
			once.Do(func() { close(inModel) })
			return openaitest.Reply{Hold: hold, Text: []string{"never"}}
		}
		if len(sinceUser(c)) == 0 && c.LastUserText() == "start" {
			cmd, _ := json.Marshal(map[string]any{"command": "sh -c 'sleep 300 & read x < " + fifo + "'", "background": true})
			child, _ := json.Marshal(map[string]any{"description": "child work", "prompt": "CHILD-TASK"})
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "run_command", Arguments: string(cmd)}, {ID: "p2", Name: "bg", Arguments: string(child)}}}
		}
		return openaitest.Text("ok")
	})
	args := daemonArgs(srv, stateDir, "--subagent", "bg=spawn,background")
	a := start(t, opts{}, args...)
	wa := stdioWire(a)
	wa.initialize(ctx, nil)
	sid := wa.newSession(ctx, cwd)
	if stop := wa.prompt(ctx, sid, "start"); stop != "end_turn" {
		t.Fatalf("stop %q; stderr:\n%s", stop, a.stderr)
	}
	<-inModel
	below := descendantsOf(t, a.cmd.Process.Pid)
	if len(below) < 2 {
		t.Fatalf("%d processes below dshd, want the command's", len(below))
	}
	a.signal(syscall.SIGTERM)
	if code := a.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, a.stderr)
	}
	for pid, info := range below {
		waitExit(ctx, t, pid)
		if !ended(pid) {
			t.Errorf("process %d (%s) outlived the daemon", pid, info.comm)
		}
	}
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"interrupted"`)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t2"`, `"state":"interrupted"`)

	b := start(t, opts{}, args...)
	wb := stdioWire(b)
	wb.initialize(ctx, nil)
	wb.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	before := len(wb.updates(sid))
	wb.prompt(ctx, sid, "/tasks")
	if list := text(wb.updates(sid)[before:]); !containsAll(list, "t1 command, interrupted", "t2 subagent, interrupted") {
		t.Fatalf("/tasks after the stop:\n%s", list)
	}
}

func TestBackground_AfterARestartASettledACPChildIsContinuedThroughItsAgentsSession(t *testing.T) {
	ctx := testCtx(t)
	stateDir, cwd := t.TempDir(), t.TempDir()
	srv := fakeModel(t)
	var rec recorder
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if c == nil {
			return openaitest.Status(400)
		}
		if firstUser(c) == "CHILD-TASK" {
			rec.add("child", c)
			if c.LastUserText() == "CHILD-MORE" {
				return openaitest.Text("CHILD-ANSWER-2")
			}
			return openaitest.Text("CHILD-ANSWER-1")
		}
		switch last, n := c.LastUserText(), len(sinceUser(c)); {
		case last == "start" && n == 0:
			return call("p1", "bgacp", map[string]any{"description": "child work", "prompt": "CHILD-TASK"})
		case last == "go on" && n == 0:
			return call("p2", "task_continue", map[string]any{"id": "t1", "prompt": "CHILD-MORE"})
		case last == "go on":
			rec.add("continued", c)
		}
		return openaitest.Text("ok")
	})
	args := daemonArgs(srv, stateDir, "--subagent", "bgacp=acp,background")
	a := start(t, opts{}, args...)
	wa := stdioWire(a)
	wa.initialize(ctx, nil)
	sid := wa.newSession(ctx, cwd)
	wa.prompt(ctx, sid, "start")
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`, `"snapshot"`)
	a.signal(syscall.SIGKILL) // the child dshd dies with it
	a.wait(ctx)

	b := start(t, opts{}, args...)
	wb := stdioWire(b)
	wb.initialize(ctx, nil)
	wb.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	if stop := wb.prompt(ctx, sid, "go on"); stop != "end_turn" {
		t.Fatalf("stop %q; stderr:\n%s", stop, b.stderr)
	}
	if res := rec.get("continued"); len(res) != 1 || !containsAll(strings.Join(sinceUser(res[0]), "\n"), "Task t1 is running again") {
		t.Fatalf("task_continue after the restart was not followed by one model call that has its result; stderr:\n%s", b.stderr)
	}
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`, `"runs":2`)
	var continued *openaitest.ChatRequest
	for _, c := range rec.get("child") {
		if c.LastUserText() == "CHILD-MORE" {
			continued = c
		}
	}
	if continued == nil || !holds(continued, "CHILD-TASK", "CHILD-ANSWER-1", "CHILD-MORE") {
		t.Fatalf("the acp child continued after the restart does not have its conversation: %+v; stderr:\n%s", continued, b.stderr)
	}
}
