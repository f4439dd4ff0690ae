// End-to-end tests of a session that another process touches while a
// daemon has it open: `dshd sessions delete` leaves it alone (the
// daemon's lock says it is open, also once its journal gave its file
// back), a daemon that died holds nothing, a second daemon does not load
// it, and a session deleted all the same (--force) never has a later turn
// acknowledged, since nothing the daemon writes of it can be loaded.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// loadParams are session/load's params for sid in cwd.
func loadParams(sid, cwd string) map[string]any {
	return map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
}

func TestSessionsDeleteLeavesASessionARunningDaemonHasOpen(t *testing.T) {
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	// One journal file open at a time: the held session's journal gives
	// its file back to the next session's, and stays locked all the same.
	args := []string{"--model", "scripted", "--state-dir", state, "--max-open-journals", "1"}
	p := start(t, opts{}, args...)
	c := stdioWire(p)
	held := c.openSession(ctx, cwd)
	c.endTurn(ctx, held, "held turn 1")
	closed := c.newSession(ctx, cwd)
	c.endTurn(ctx, closed, "a session closed before the delete")
	c.call(ctx, "session/close", map[string]any{"sessionId": closed}, nil)

	code, _, stderr := sessionsCmd(t, state, "delete", closed, held)
	if code != 3 || !containsAll(stderr, "deleted "+closed, held+" is open in a running dshd", "--force") {
		t.Fatalf("delete of a closed and a held session: exit %d, want 3; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(state, "sessions", held+".jsonl")); err != nil {
		t.Fatalf("the held session's journal: %v", err)
	}
	if got := journals(t, state); len(got) != 1 {
		t.Fatalf("journals left: %v, want only the held session's", got)
	}

	// The daemon goes on with the session, and what it acknowledges loads.
	c.endTurn(ctx, held, "held turn 2")
	c.call(ctx, "session/close", map[string]any{"sessionId": held}, nil)
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	d := loadInFreshDaemon(ctx, t, held, cwd, []string{"held turn 1", "held turn 2"}, args...)
	if code, _, _ := sessionsCmd(t, state, "delete", held); code != 3 {
		t.Fatalf("delete of the session the new daemon loaded: exit %d, want 3", code)
	}

	// Closed, it is deleted like any other.
	d.call(ctx, "session/close", map[string]any{"sessionId": held}, nil)
	if code, _, stderr := sessionsCmd(t, state, "delete", held); code != 0 {
		t.Fatalf("delete of the session once no daemon has it open: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestADaemonThatWasKilledHoldsNoSession(t *testing.T) {
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	p := start(t, opts{}, "--model", "scripted", "--state-dir", state)
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "before the kill")
	if code, _, _ := sessionsCmd(t, state, "delete", sid); code != 3 {
		t.Fatalf("delete while the daemon runs: exit %d, want 3", code)
	}
	p.signal(syscall.SIGKILL)
	p.wait(ctx)
	// The lock went with the process: nothing stale stays behind.
	if code, _, stderr := sessionsCmd(t, state, "delete", sid); code != 0 || !strings.Contains(stderr, "deleted "+sid) {
		t.Fatalf("delete after the daemon was killed: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestASecondDaemonDoesNotLoadASessionTheFirstHasOpen(t *testing.T) {
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--model", "scripted", "--state-dir", state}
	first := stdioWire(start(t, opts{}, args...))
	sid := first.openSession(ctx, cwd)
	first.endTurn(ctx, sid, "in the first daemon")

	second := stdioWire(start(t, opts{}, args...))
	second.initialize(ctx, nil)
	for _, method := range []string{"session/load", "session/resume"} {
		e := second.callFail(ctx, method, loadParams(sid, cwd))
		if e.Code != -32602 || !strings.Contains(string(e.Data), "open in another dshd process") {
			t.Fatalf("%s of a session another daemon has open: %v", method, e)
		}
	}
	if e := second.callFail(ctx, "session/delete", map[string]any{"sessionId": sid}); e.Code != -32602 || !strings.Contains(string(e.Data), "open in another dshd process") {
		t.Fatalf("session/delete of a session another daemon has open: %v", e)
	}
	// The first daemon's session is whole and goes on.
	first.endTurn(ctx, sid, "still in the first daemon")
	first.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
	second.call(ctx, "session/load", loadParams(sid, cwd), nil)
	second.endTurn(ctx, sid, "in the second daemon, once the first closed it")
}

func TestAForceDeletedSessionsTurnsAreNotAcknowledged(t *testing.T) {
	ctx := testkit.Context(t)
	asked, release := make(chan struct{}), make(chan struct{})
	srv := fakeModel(t)
	var released sync.Once
	letGo := func() { released.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the server closes, should the test fail first
	calls := 0
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if strings.Contains(r.Chat.LastUserText(), "wait") {
			calls++
			if calls == 1 {
				close(asked)
				<-release
			}
		}
		return openaitest.Text("done")
	})
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state}
	p := start(t, opts{}, args...)
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "saved")

	// Deleted while a turn runs: the turn writes to a file no load reads.
	answer := c.promptAsync(sid, "wait for the delete")
	testkit.Await(t, asked, "the turn's model call")
	code, _, stderr := sessionsCmd(t, state, "delete", "--force", sid)
	if code != 0 || !strings.Contains(stderr, "which a running dshd has open") {
		t.Fatalf("delete --force: exit %d; stderr:\n%s", code, stderr)
	}
	letGo()
	m := testkit.Await(t, answer, "the turn's answer")
	if m.Error == nil || !containsAll(m.Error.Message, "The turn was not saved", "deleted or replaced by another process", "start a new one") {
		t.Fatalf("the turn running when its session was deleted answered %s %v, want that it was not saved", m.Result, m.Error)
	}
	// Nor is a later prompt run.
	e := c.callFail(ctx, "session/prompt", promptParams(sid, "after the delete"))
	if !containsAll(e.Message, "The prompt was not run", "deleted or replaced by another process") {
		t.Fatalf("a prompt after the delete answered %v", e)
	}
	if got := journals(t, state); len(got) != 0 {
		t.Fatalf("the daemon brought a journal back: %v", got)
	}
	if n := strings.Count(p.stderr.String(), "session journal deleted or replaced by another process"); n != 1 {
		t.Fatalf("the lost journal was logged %d times, want once; stderr:\n%s", n, p.stderr)
	}
}
