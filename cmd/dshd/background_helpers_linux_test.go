// This file holds what the background-task tests share: fake-model reply
// helpers that tell a parent's requests from a child's, and waits on what
// only the daemon's files and processes show (a journal record, a
// process's exit), woken by the kernel (inotify, a pidfd) rather than by a
// clock.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// call is a reply with one tool call.
func call(id, name string, args any) openaitest.Reply {
	b, _ := json.Marshal(args)
	return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: name, Arguments: string(b)}}}
}

// firstUser is the text of a request's first user message: which agent
// (the parent, a child) sent it.
func firstUser(c *openaitest.ChatRequest) string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Text()
		}
	}
	return ""
}

// sinceUser are the tool results after a request's last user message:
// where the model is in its current turn.
func sinceUser(c *openaitest.ChatRequest) []string {
	var out []string
	for _, m := range c.Messages {
		switch m.Role {
		case "user":
			out = nil
		case "tool":
			var s string
			_ = json.Unmarshal(m.Content, &s)
			out = append(out, s)
		}
	}
	return out
}

// holds reports whether a request's messages contain every one of the
// words, in any role.
func holds(c *openaitest.ChatRequest, words ...string) bool {
	var all strings.Builder
	for _, m := range c.Messages {
		all.WriteString(m.Text())
		all.WriteByte('\n')
	}
	return containsAll(all.String(), words...)
}

// recorder keeps requests a handler wants to look at later.
type recorder struct {
	mu   sync.Mutex
	reqs map[string][]*openaitest.ChatRequest
}

func (r *recorder) add(key string, c *openaitest.ChatRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reqs == nil {
		r.reqs = map[string][]*openaitest.ChatRequest{}
	}
	r.reqs[key] = append(r.reqs[key], c)
}

func (r *recorder) get(key string) []*openaitest.ChatRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*openaitest.ChatRequest(nil), r.reqs[key]...)
}

// journalPath is where a daemon with state dir dir keeps session sid.
func journalPath(dir, sid string) string { return filepath.Join(dir, "sessions", sid+".jsonl") }

// waitJournal waits until a line of the journal at path holds every one
// of the words. inotify on the journal's directory wakes it at each
// write; the poll's timeout only lets it see ctx end.
func waitJournal(ctx context.Context, t *testing.T, path string, words ...string) string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		t.Fatalf("inotify watch: %v", err)
	}
	buf := make([]byte, 4096)
	for {
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			if containsAll(string(line), words...) {
				return string(line)
			}
		}
		for {
			if ctx.Err() != nil {
				t.Fatalf("no journal line with %q in %s:\n%s", words, path, b)
			}
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
			if err != nil && !errors.Is(err, unix.EINTR) {
				t.Fatalf("poll: %v", err)
			}
			if n > 0 {
				for {
					if _, err := unix.Read(fd, buf); err != nil {
						break
					}
				}
				break
			}
		}
	}
}

// killAndReap kills the daemon p with SIGKILL and waits until every
// process below it has ended too. A child dshd shares the daemon's state
// dir and dies of the parent-death signal a moment after the daemon, so a
// test that returned at once could see its temp dir removed while that
// child still closes a journal in it ("directory not empty").
func killAndReap(ctx context.Context, t *testing.T, p *proc) {
	t.Helper()
	below := testkit.Descendants(t, p.cmd.Process.Pid)
	p.signal(unix.SIGKILL)
	p.wait(ctx)
	for pid := range below {
		waitExit(ctx, t, pid)
	}
}

// waitExit waits for process pid to end, through a pidfd (readable once
// the process has exited).
func waitExit(ctx context.Context, t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	defer unix.Close(fd)
	for !testkit.Ended(pid) {
		if ctx.Err() != nil {
			t.Fatalf("process %d did not exit", pid)
		}
		_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
	}
}

// commandTest is what a test of background commands starts with: the
// sandbox they need, a context, a workspace cwd with a fifo named name in
// it for its commands to wait on, and the fake model.
func commandTest(t *testing.T, name string) (ctx context.Context, cwd, fifo string, srv *openaitest.Server) {
	t.Helper()
	needSandbox(t)
	cwd = t.TempDir()
	return testkit.Context(t), cwd, mkfifo(t, cwd, name), fakeModel(t)
}

// mkfifo makes a named pipe in dir: a background command reads it to wait
// for the test.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// release writes a line into the fifo once its reader opened it, on a
// goroutine the test waits for before it ends.
func release(t *testing.T, fifo string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.WriteString("go\n")
		f.Close()
	}()
	t.Cleanup(func() {
		// Opening a fifo without a reader blocks; one opened for reading
		// here lets a writer that never met the command go.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			defer r.Close()
		}
		<-done
	})
}

// bgDaemon is how a background test starts its stdio daemons: against
// srv, with state in stateDir, the client capabilities caps and the extra
// arguments args (a --subagent, a limit).
type bgDaemon struct {
	srv      *openaitest.Server
	stateDir string
	caps     map[string]any
	args     []string
}

// open starts the daemon, runs the handshake and opens a session in cwd.
func (d bgDaemon) open(ctx context.Context, t *testing.T, cwd string) (*proc, *wire, string) {
	t.Helper()
	p, w := d.handshake(ctx, t)
	return p, w, w.newSession(ctx, cwd)
}

// load starts the daemon again over the same state, runs the handshake and
// loads session sid in cwd: the daemon after a restart.
func (d bgDaemon) load(ctx context.Context, t *testing.T, sid, cwd string) (*proc, *wire) {
	t.Helper()
	p, w := d.handshake(ctx, t)
	w.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	return p, w
}

// crashAndLoad kills a, a daemon d started, with SIGKILL, as a crash, and
// starts d again over the same state with session sid loaded in cwd.
func (d bgDaemon) crashAndLoad(ctx context.Context, t *testing.T, a *proc, sid, cwd string) (*proc, *wire) {
	t.Helper()
	a.signal(unix.SIGKILL)
	a.wait(ctx)
	return d.load(ctx, t, sid, cwd)
}

func (d bgDaemon) handshake(ctx context.Context, t *testing.T) (*proc, *wire) {
	t.Helper()
	p := start(t, opts{}, daemonArgs(d.srv, d.stateDir, d.args...)...)
	w := stdioWire(p)
	w.initialize(ctx, d.caps)
	return p, w
}

// promptText runs a turn and returns the text of the updates it brought.
func promptText(ctx context.Context, w *wire, sid, prompt string) string {
	before := len(w.updates(sid))
	w.prompt(ctx, sid, prompt)
	return text(w.updates(sid)[before:])
}

// calls is one reply with the tool calls of all of rs.
func calls(rs ...openaitest.Reply) openaitest.Reply {
	var out openaitest.Reply
	for _, r := range rs {
		out.ToolCalls = append(out.ToolCalls, r.ToolCalls...)
	}
	return out
}

// bgCommand is a reply that runs command in the background.
func bgCommand(id, command string) openaitest.Reply {
	return call(id, "run_command", map[string]any{"command": command, "background": true})
}

// startChild is a reply that starts a background child through tool with
// the prompt CHILD-TASK.
func startChild(id, tool, description string) openaitest.Reply {
	return call(id, tool, map[string]any{"description": description, "prompt": "CHILD-TASK"})
}

// turnSteps is a fake model for a parent's one turn, step by step: the
// call made after n tool results of the turn gets steps[n](), and a call
// with no step (nil, or past the last) gets "done".
func turnSteps(steps ...func() openaitest.Reply) func(*openaitest.Request) openaitest.Reply {
	return func(r *openaitest.Request) openaitest.Reply {
		if n := len(sinceUser(r.Chat)); n < len(steps) && steps[n] != nil {
			return steps[n]()
		}
		return openaitest.Text("done")
	}
}

// always is a step of turnSteps that answers r.
func always(r openaitest.Reply) func() openaitest.Reply {
	return func() openaitest.Reply { return r }
}

// turnResults starts the daemon, runs one turn of prompt, which must end,
// in a new session in cwd, and returns the tool results of the turn's last
// model call, which must be n.
func (d bgDaemon) turnResults(ctx context.Context, t *testing.T, cwd, prompt string, n int) (*proc, []string) {
	t.Helper()
	p, w, sid := d.open(ctx, t, cwd)
	w.endTurn(ctx, sid, prompt)
	reqs := d.srv.ChatRequests()
	got := sinceUser(reqs[len(reqs)-1])
	if len(got) != n {
		t.Fatalf("tool results %q", got)
	}
	return p, got
}

// isChild reports whether a request is a background child's: its first
// user message is CHILD-TASK.
func isChild(c *openaitest.ChatRequest) bool { return firstUser(c) == "CHILD-TASK" }

// answerChild answers a child's request, recorded under "child":
// CHILD-ANSWER-2 once continued with CHILD-MORE, CHILD-ANSWER-1 before.
func answerChild(rec *recorder, c *openaitest.ChatRequest) openaitest.Reply {
	rec.add("child", c)
	if c.LastUserText() == "CHILD-MORE" {
		return openaitest.Text("CHILD-ANSWER-2")
	}
	return openaitest.Text("CHILD-ANSWER-1")
}

// continuedChild is the last of the child's requests recorded in rec that
// continues it with CHILD-MORE, nil when none did.
func continuedChild(rec *recorder) *openaitest.ChatRequest {
	var continued *openaitest.ChatRequest
	for _, c := range rec.get("child") {
		if c.LastUserText() == "CHILD-MORE" {
			continued = c
		}
	}
	return continued
}

// waitContinued waits until task id's second run has completed in the
// journal at path, and fails t unless the child's request that continued
// it, recorded in rec, holds its earlier conversation; logs are the
// daemons' stderr, for the failure message.
func waitContinued(ctx context.Context, t *testing.T, path, id string, rec *recorder, logs ...*lineLog) {
	t.Helper()
	waitJournal(ctx, t, path, `"k":"task"`, `"id":"`+id+`"`, `"state":"completed"`, `"runs":2`)
	continued := continuedChild(rec)
	if continued == nil || !holds(continued, "CHILD-TASK", "CHILD-ANSWER-1", "CHILD-MORE") {
		var stderr strings.Builder
		for _, l := range logs {
			stderr.WriteString("\nstderr:\n" + l.String())
		}
		t.Fatalf("the continued child's request does not hold its conversation: %+v%s", continued, stderr.String())
	}
}

// continueScript is a fake model for a parent that starts a background
// child through tool in its turn "start" and continues it with CHILD-MORE
// at the beginning of its turn more; the child answers through
// answerChild. The parent's later calls of turn more are recorded under
// "continued".
type continueScript struct {
	tool, more string
	rec        recorder
}

func (s *continueScript) handle(r *openaitest.Request) openaitest.Reply {
	c := r.Chat
	if isChild(c) {
		return answerChild(&s.rec, c)
	}
	switch last, n := c.LastUserText(), len(sinceUser(c)); {
	case last == "start" && n == 0:
		return startChild("p1", s.tool, "child work")
	case last == s.more && n == 0:
		return call("p2", "task_continue", map[string]any{"id": "t1", "prompt": "CHILD-MORE"})
	case last == s.more:
		s.rec.add("continued", c)
	}
	return openaitest.Text("ok")
}

// heldChild is a child whose model calls are held until the test ends;
// in is closed at its first call.
type heldChild struct {
	hold, in chan struct{}
	once     sync.Once
}

func newHeldChild(t *testing.T) *heldChild {
	h := &heldChild{hold: make(chan struct{}), in: make(chan struct{})}
	t.Cleanup(func() { close(h.hold) })
	return h
}

func (h *heldChild) reply() openaitest.Reply {
	h.once.Do(func() { close(h.in) })
	return openaitest.Reply{Hold: h.hold, Text: []string{"never"}}
}

// script is a fake model for a parent that starts its tasks with first in
// the first call of a turn (of the turn whose prompt is turn, when set),
// and says after otherwise, with the child held.
func (h *heldChild) script(turn string, first openaitest.Reply, after string) func(*openaitest.Request) openaitest.Reply {
	return func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if isChild(c) {
			return h.reply()
		}
		if len(sinceUser(c)) == 0 && (turn == "" || c.LastUserText() == turn) {
			return first
		}
		return openaitest.Text(after)
	}
}

// shownAsToolCall reports whether the editor was shown a tool call of
// session sid whose title begins with prefix.
func shownAsToolCall(w *wire, sid, prefix string) bool {
	for _, n := range w.updates(sid) {
		var u struct {
			Title string `json:"title"`
		}
		if n.Kind == "tool_call" && json.Unmarshal(n.Update, &u) == nil && strings.HasPrefix(u.Title, prefix) {
			return true
		}
	}
	return false
}
