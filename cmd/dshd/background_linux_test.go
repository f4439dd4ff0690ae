// End-to-end tests of background work (issue 13) with a real dshd and the
// fake OpenAI server: a background command read in steps, a background
// child steered while it runs and continued after it settled (in process
// and in a child dshd), the notice of a settled task in the next model
// call, a wait that times out, a restart during a running task, a close
// that leaves no process behind, and the child sessions an opted-in editor
// sees.

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// daemonArgs are a serve daemon's arguments against srv.
func daemonArgs(srv *openaitest.Server, stateDir string, extra ...string) []string {
	return append([]string{"--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", stateDir, "--mode", "yolo"}, extra...)
}

func TestBackground_TheModelReadsACommandsOutputInTwoSteps(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "gate")
	command := "echo $((40+2))-first; read x < " + fifo + "; echo $((50+5))-second"
	var once sync.Once
	srv.Handle(turnSteps(
		always(bgCommand("c1", command)),
		func() openaitest.Reply {
			// The command waits on the fifo until the model has its first
			// output; then it prints the rest and exits.
			once.Do(func() { release(t, fifo) })
			return call("c2", "task_wait", map[string]any{"id": "t1", "timeout": 60})
		},
		always(call("c3", "task_read", map[string]any{"id": "t1"})),
	))
	_, got := bgDaemon{srv: srv, stateDir: t.TempDir()}.turnResults(ctx, t, cwd, "run it in the background", 3)
	if !containsAll(got[0], "Started background task t1", "42-first", "It keeps running") || strings.Contains(got[0], "55-second") {
		t.Errorf("the start's result is not the first output only:\n%s", got[0])
	}
	if !containsAll(got[1], "New output since the last read", "55-second", "Result:", "exit code 0") || strings.Contains(got[1], "42-first") {
		t.Errorf("the wait's result is not the new output and the result:\n%s", got[1])
	}
	if !containsAll(got[2], "No new output since the last read", "completed") {
		t.Errorf("a read after everything was read:\n%s", got[2])
	}
}

// childScript routes a parent that starts a background child through
// tool, steers it while its first model call is held, and continues it in
// its next turn; and the child, which answers once steered and once
// continued. Requests are recorded by who made them.
type childScript struct {
	tool       string
	gate       chan struct{} // holds the child's first model call
	firstCall  chan struct{} // closed when the child's first call arrived
	firstOnce  sync.Once
	steerFirst bool // the child answers its first call (acp) instead of calling a tool
	rec        recorder
}

func newChildScript(tool string) *childScript {
	return &childScript{tool: tool, gate: make(chan struct{}), firstCall: make(chan struct{})}
}

func (s *childScript) handle(r *openaitest.Request) openaitest.Reply {
	c := r.Chat
	if isChild(c) {
		return s.child(c)
	}
	last := c.LastUserText()
	switch n := len(sinceUser(c)); {
	case last == "start" && n == 0:
		return startChild("p1", s.tool, "child work")
	case last == "start" && n == 1:
		<-s.firstCall // the child is in its first model call
		return call("p2", "task_send", map[string]any{"id": "t1", "message": "STEER-MSG"})
	case last == "what now?" && n == 0:
		s.rec.add("turn2", c)
		return call("p3", "task_continue", map[string]any{"id": "t1", "prompt": "CHILD-MORE"})
	}
	return openaitest.Text("parent: ok")
}

func (s *childScript) child(c *openaitest.ChatRequest) openaitest.Reply {
	s.rec.add("child", c)
	last := c.LastUserText()
	switch {
	case last == "CHILD-MORE":
		return openaitest.Text("CHILD-ANSWER-2")
	case last == "STEER-MSG" && s.steerFirst:
		return openaitest.Text("CHILD-ANSWER-STEERED")
	case len(sinceUser(c)) == 0 && last == "CHILD-TASK":
		s.firstOnce.Do(func() { close(s.firstCall) })
		if s.steerFirst {
			return openaitest.Reply{Hold: s.gate, Text: []string{"CHILD-ANSWER-1"}}
		}
		return openaitest.Reply{Hold: s.gate, ToolCalls: []openaitest.ToolCall{{ID: "k1", Name: "task_list", Arguments: `{}`}}}
	}
	return openaitest.Text("CHILD-ANSWER-1")
}

// steerAndContinue runs the parent's two turns and checks what the child
// and the parent's model were sent: the steering message in the child's
// request after it was sent, the settle notice in the parent's next model
// call, and the child's whole conversation when it is continued.
func steerAndContinue(t *testing.T, s *childScript, args ...string) {
	ctx := testkit.Context(t)
	stateDir := t.TempDir()
	srv := fakeModel(t)
	srv.Handle(s.handle)
	p, w, sid := bgDaemon{srv: srv, stateDir: stateDir, args: args}.open(ctx, t, t.TempDir())
	w.endTurn(ctx, sid, "start")
	// The parent's turn has ended and the child is still in its first
	// model call: cancelling nothing, the child goes on.
	close(s.gate)
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`)
	w.endTurn(ctx, sid, "what now?")
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`, `"runs":2`)

	turn2 := s.rec.get("turn2")
	if len(turn2) != 1 {
		t.Fatalf("%d first calls of turn 2", len(turn2))
	}
	notice := ""
	for _, u := range userTexts(turn2[0]) {
		if strings.HasPrefix(u, "Background task t1") {
			notice = u
		}
	}
	if !containsAll(notice, "completed", "child work") {
		t.Fatalf("the parent's next model call has no settle notice; its user messages: %q", userTexts(turn2[0]))
	}
	var steered, continued *openaitest.ChatRequest
	for _, c := range s.rec.get("child") {
		if holds(c, "STEER-MSG") && steered == nil {
			steered = c
		}
		if c.LastUserText() == "CHILD-MORE" {
			continued = c
		}
	}
	if steered == nil {
		t.Fatalf("no child request carries the steering message; stderr:\n%s", p.stderr)
	}
	if holds(steered, "CHILD-ANSWER-1", "CHILD-MORE") && !s.steerFirst {
		t.Errorf("the steering message came late: %q", userTexts(steered))
	}
	if continued == nil || !holds(continued, "CHILD-TASK", "STEER-MSG", "CHILD-ANSWER-1", "CHILD-MORE") {
		t.Fatalf("the continued child's request does not hold its earlier conversation: %+v", continued)
	}
	// The editor saw the notice as a tool call of its own in turn 2.
	if !shownAsToolCall(w, sid, "Task t1 completed") {
		t.Errorf("no tool call shows the notice to the editor")
	}
	killAndReap(ctx, t, p)
}

func TestBackground_ASpawnChildIsSteeredWhileItRunsAndContinuedAfterItSettled(t *testing.T) {
	steerAndContinue(t, newChildScript("bg"), "--subagent", "bg=spawn,background")
}

func TestBackground_AnACPChildIsSteeredAndContinuedThroughItsOwnSession(t *testing.T) {
	s := newChildScript("bgacp")
	s.steerFirst = true // a message waits for the agent's current prompt
	steerAndContinue(t, s, "--subagent", "bgacp=acp,background")
	var second *openaitest.ChatRequest
	for _, c := range s.rec.get("child") {
		if c.LastUserText() == "STEER-MSG" {
			second = c
		}
	}
	if second == nil || !holds(second, "CHILD-TASK", "CHILD-ANSWER-1") {
		t.Fatalf("the steering message is not the child session's next prompt: %+v", second)
	}
}

func TestBackground_AReleasedACPChildIsContinuedOnANewProcessThroughSessionResume(t *testing.T) {
	ctx := testkit.Context(t)
	stateDir := t.TempDir()
	srv := fakeModel(t)
	s := &continueScript{tool: "bgacp", more: "more"}
	srv.Handle(s.handle)
	p, w, sid := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bgacp=acp,background", "--task-idle-release", "1ms"}}.open(ctx, t, t.TempDir())
	children := testkit.Descendants(t, p.cmd.Process.Pid)
	w.prompt(ctx, sid, "start")
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`)
	// The idle time is over at once: the child dshd is let go.
	for pid := range testkit.Descendants(t, p.cmd.Process.Pid) {
		if _, before := children[pid]; !before {
			waitExit(ctx, t, pid)
		}
	}
	w.prompt(ctx, sid, "more")
	waitContinued(ctx, t, journal, "t1", &s.rec, p.stderr)
}

func TestBackground_AWaitThatTimesOutReturnsTheOutputSoFarAndCancelStopsTheCommand(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "never")
	srv.Handle(turnSteps(
		always(bgCommand("c1", "echo $((6*7))-so-far; read x < "+fifo)),
		always(call("c2", "task_wait", map[string]any{"id": "t1", "timeout": 1})),
		always(call("c3", "task_cancel", map[string]any{"id": "t1"})),
	))
	p, got := bgDaemon{srv: srv, stateDir: t.TempDir()}.turnResults(ctx, t, cwd, "go", 3)
	if !containsAll(got[1], "Task t1 is still running after 1s", "running") {
		t.Errorf("the wait that timed out:\n%s", got[1])
	}
	if !containsAll(got[2], "cancelled", "stopped") {
		t.Errorf("the cancel:\n%s", got[2])
	}
	for pid, info := range testkit.Descendants(t, p.cmd.Process.Pid) {
		if !testkit.Ended(pid) {
			t.Errorf("process %d (%s) still runs after the cancel", pid, info.Comm)
		}
	}
}

func TestBackground_ARestartDuringARunningTaskLoadsItInterruptedWithItsOutputAndASettledChildContinues(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "never")
	stateDir := t.TempDir()
	var rec recorder
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if isChild(c) {
			return answerChild(&rec, c)
		}
		switch last, n := c.LastUserText(), len(sinceUser(c)); {
		case last == "start" && n == 0:
			return calls(bgCommand("p1", "echo $((1+1))-started-out; read x < "+fifo), startChild("p2", "bg", "child work"))
		case last == "start" && n == 2:
			return call("p3", "task_wait", map[string]any{"id": "t2"})
		case last == "go on" && n == 0:
			rec.add("after", c)
			return call("p4", "task_continue", map[string]any{"id": "t2", "prompt": "CHILD-MORE"})
		}
		return openaitest.Text("ok")
	})
	d := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bg=spawn,background"}}
	a, wa, sid := d.open(ctx, t, cwd)
	wa.endTurn(ctx, sid, "start")
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task_output"`, `"id":"t1"`, "2-started-out")
	b, wb := d.crashAndLoad(ctx, t, a, sid, cwd) // t1 is still running in the journal
	list := promptText(ctx, wb, sid, "/tasks")
	if !containsAll(list, "t1 command, interrupted", "t2 subagent, completed") {
		t.Fatalf("/tasks after the restart:\n%s", list)
	}
	wb.endTurn(ctx, sid, "go on")
	after := rec.get("after")
	if len(after) != 1 || !holds(after[0], "Background task t1", "interrupted", "2-started-out") {
		t.Fatalf("the first model call after the restart has no notice of the interrupted task: %+v", after)
	}
	waitContinued(ctx, t, journal, "t2", &rec, b.stderr)
	release(t, fifo) // t1's command died with the first daemon; nobody reads
}

func TestBackground_ClosingTheSessionDuringTasksLeavesNoProcessBehind(t *testing.T) {
	ctx, cwd, fifo, srv := commandTest(t, "never")
	srv.Handle(newHeldChild(t).script("", calls(bgCommand("p1", "sh -c 'sleep 300 & read x < "+fifo+"'"), startChild("p2", "bgacp", "d")), "started"))
	stateDir := t.TempDir()
	p, w, sid := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bgacp=acp,background"}}.open(ctx, t, cwd)
	w.prompt(ctx, sid, "start two tasks")
	if n := len(testkit.Descendants(t, p.cmd.Process.Pid)); n < 3 {
		t.Fatalf("%d processes below dshd, want the command's and a child dshd's", n)
	}
	w.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
	for pid, info := range testkit.Descendants(t, p.cmd.Process.Pid) {
		if !testkit.Ended(pid) {
			t.Errorf("process %d (%s) still runs after session/close", pid, info.Comm)
		}
	}
	line := waitJournal(ctx, t, journalPath(stateDir, sid), `"k":"task"`, `"id":"t1"`, `"state":"cancelled"`)
	if !strings.Contains(line, `"state":"cancelled"`) {
		t.Fatal(line)
	}
}

func TestBackground_AnOptedInEditorSeesTheChildSessionRunAfterThePromptAnsweredThenIdle(t *testing.T) {
	ctx := testkit.Context(t)
	srv := fakeModel(t)
	gate := make(chan struct{})
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if isChild(c) {
			return openaitest.Reply{Hold: gate, Text: []string{"CHILD-ANSWER"}}
		}
		if len(sinceUser(c)) == 0 {
			return startChild("p1", "bg", "child work")
		}
		return openaitest.Text("parent done")
	})
	_, w, sid := bgDaemon{srv: srv, stateDir: t.TempDir(), caps: map[string]any{"subagents": map[string]any{}}, args: []string{"--subagent", "bg=spawn,background"}}.open(ctx, t, t.TempDir())
	w.endTurn(ctx, sid, "start")
	states := func(ns []note) []string {
		var out []string
		for _, n := range ns {
			var u struct {
				SessionID string `json:"sessionId"`
				State     *struct {
					State      string `json:"state"`
					StopReason string `json:"stopReason"`
				} `json:"state"`
			}
			if n.Kind == "subagent_update" && json.Unmarshal(n.Update, &u) == nil && u.State != nil {
				out = append(out, u.State.State+" "+u.State.StopReason)
			}
		}
		return out
	}
	got := w.waitUpdates(ctx, sid, func(ns []note) bool { return len(states(ns)) > 0 })
	if s := states(got); len(s) != 1 || s[0] != "running " {
		t.Fatalf("after the prompt answered the child's states are %q, want running", s)
	}
	close(gate)
	got = w.waitUpdates(ctx, sid, func(ns []note) bool { return len(states(ns)) > 1 })
	if s := states(got); fmt.Sprint(s) != "[running  idle end_turn]" {
		t.Fatalf("the child's states are %q", s)
	}
}

func TestBackground_AChildRunningWhenTheDaemonDiedIsReplayedIdleWithAnError(t *testing.T) {
	ctx := testkit.Context(t)
	stateDir, cwd := t.TempDir(), t.TempDir()
	srv := fakeModel(t)
	child := newHeldChild(t)
	srv.Handle(child.script("", startChild("p1", "bg", "child work"), "started"))
	d := bgDaemon{srv: srv, stateDir: stateDir, caps: map[string]any{"subagents": map[string]any{}}, args: []string{"--subagent", "bg=spawn,background"}}
	a, wa, sid := d.open(ctx, t, cwd)
	wa.prompt(ctx, sid, "start")
	<-child.in
	waitJournal(ctx, t, journalPath(stateDir, sid), `"sessionUpdate":"subagent_update"`, `"state":"running"`)
	_, wb := d.crashAndLoad(ctx, t, a, sid, cwd)
	var last string
	for _, n := range wb.updates(sid) {
		if n.Kind == "subagent_update" && strings.Contains(string(n.Update), `"state":{`) {
			last = string(n.Update)
		}
	}
	if !containsAll(last, `"state":"idle"`, `"stopReason":"error"`, "The daemon stopped while the subagent ran.") {
		t.Fatalf("the replay's last state of the child: %s", last)
	}
}
