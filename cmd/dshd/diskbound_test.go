// End-to-end tests of the bounds on dshd's use of the disk: a session whose
// journal reached --max-journal-bytes takes no new prompt (and still
// loads), --min-free-disk-bytes keeps prompts and new sessions off a
// state directory whose file system is nearly full, and --max-state-bytes
// off one whose sessions hold that much.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/testkit"
)

// journalSize is the size of session sid's journal under state.
func journalSize(t *testing.T, state, sid string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(state, "sessions", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// loadInFreshDaemon starts a dshd with args, loads session sid and
// fails the test unless every prompt tag in acked is among the user
// messages the load replays. It returns the client, the session open.
func loadInFreshDaemon(ctx context.Context, t *testing.T, sid, cwd string, acked []string, args ...string) *wire {
	t.Helper()
	c := stdioWire(start(t, opts{}, args...))
	c.initialize(ctx, nil)
	c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	var replayed strings.Builder
	for _, n := range c.updates(sid) {
		if n.Kind == "user_message_chunk" {
			replayed.Write(n.Update)
		}
	}
	for _, tag := range acked {
		if !strings.Contains(replayed.String(), tag) {
			t.Fatalf("%d turns were acknowledged, but %q is not in the loaded session", len(acked), tag)
		}
	}
	return c
}

// promptOrRefusal prompts session sid with text: nil when the turn ended,
// the error answer when the prompt was refused; anything else fails the
// test.
func (c *wire) promptOrRefusal(ctx context.Context, sid, text string) *rpcErr {
	c.t.Helper()
	raw, err := c.callErr(ctx, "session/prompt", promptParams(sid, text))
	if e, ok := err.(*rpcErr); ok {
		return e
	}
	if err != nil || !strings.Contains(string(raw), `"end_turn"`) {
		c.t.Fatalf("the prompt %.20q answered %s, %v%s", text, raw, err, c.stderrTail())
	}
	return nil
}

func TestASessionWhoseJournalReachedMaxJournalBytesTakesNoNewPromptAndStillLoads(t *testing.T) {
	const limit = 24 << 10
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--model", "scripted", "--state-dir", state, "--max-journal-bytes", fmt.Sprint(limit)}
	p := start(t, opts{}, args...)
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)

	pad := strings.Repeat("x", 300)
	var acked []string
	var refused *rpcErr
	var before int64
	for i := 0; i < 200 && refused == nil; i++ {
		tag := fmt.Sprintf("turn %d:", i)
		before = journalSize(t, state, sid)
		if refused = c.promptOrRefusal(ctx, sid, tag+pad); refused == nil {
			acked = append(acked, tag)
			if i == 0 {
				// A fork well under the bound is made as always.
				var fork struct {
					SessionID string `json:"sessionId"`
				}
				c.call(ctx, "session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &fork)
				if fork.SessionID == "" {
					t.Fatal("session/fork of a small session made no session")
				}
			}
		}
	}
	if refused == nil {
		t.Fatalf("200 turns ran on a session bounded to %d bytes: the journal grows without end (it is %d bytes)", limit, journalSize(t, state, sid))
	}
	if len(acked) < 2 {
		t.Fatalf("the bound refused turn %d already; the test needs turns that fit", len(acked))
	}
	if before < limit {
		t.Fatalf("a prompt was refused while the journal was %d bytes, under the bound (%d)", before, limit)
	}
	if !containsAll(refused.Message, "not run", "--max-journal-bytes", fmt.Sprint(limit), "new session") {
		t.Fatalf("the refused prompt answered %v", refused)
	}
	var data struct {
		SessionID string `json:"sessionId"`
		Reason    string `json:"reason"`
		Setting   string `json:"setting"`
	}
	if err := json.Unmarshal(refused.Data, &data); err != nil || data.SessionID != sid || !strings.Contains(data.Reason, "--max-journal-bytes") || data.Setting != "--max-journal-bytes" {
		t.Fatalf("the refusal's data is %s, want the session id, the setting and a reason naming it", refused.Data)
	}
	if got := journalSize(t, state, sid); got != before {
		t.Fatalf("the refused prompt changed the journal from %d to %d bytes", before, got)
	}
	if e := c.callFail(ctx, "session/prompt", promptParams(sid, "again")); !strings.Contains(e.Message, "--max-journal-bytes") {
		t.Fatalf("the next prompt answered %v", e)
	}
	// A mode change is recorded too: a client sending them without end
	// would grow the journal as well.
	if e := c.callFail(ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}); !containsAll(e.Message, "not changed", "--max-journal-bytes") {
		t.Fatalf("a mode change on the full session answered %v", e)
	}
	if got := journalSize(t, state, sid); got != before {
		t.Fatalf("a second refused prompt and a refused mode change changed the journal from %d to %d bytes", before, got)
	}

	// A fork copies the conversation and what a load replays: it would
	// start at the bound, take no prompt either, and is not made.
	n := len(journals(t, state))
	if e := c.callFail(ctx, "session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); !containsAll(e.Message, "not forked", "--max-journal-bytes", fmt.Sprint(limit), "new session") {
		t.Fatalf("a fork of the full session answered %v", e)
	}
	if got := len(journals(t, state)); got != n {
		t.Fatalf("the refused fork left %d journals, there were %d", got, n)
	}
	// A new session starts small and runs.
	fresh := c.newSession(ctx, cwd)
	c.endTurn(ctx, fresh, "a new session")

	if got := strings.Count(p.stderr.String(), session.LogJournalBound); got != 1 {
		t.Fatalf("the bound was logged %d times for one session, want once; stderr:\n%s", got, p.stderr)
	}
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}

	// Loading is reading: a fresh daemon replays every turn, and still
	// refuses the next prompt.
	c2 := loadInFreshDaemon(ctx, t, sid, cwd, acked, args...)
	if e := c2.callFail(ctx, "session/prompt", promptParams(sid, "after a load")); !strings.Contains(e.Message, "--max-journal-bytes") {
		t.Fatalf("a prompt after the load answered %v", e)
	}
	if got := journalSize(t, state, sid); got != before {
		t.Fatalf("the load and its refused prompt changed the journal from %d to %d bytes", before, got)
	}
}

func TestPromptRefusedByADiskBoundSaysWhichAndExitsOne(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	base := []string{"prompt", "--model", "scripted", "--state-dir", state, "--cwd", cwd}

	// Every journal is over one byte: the first prompt is refused.
	code, stdout, stderr := runDshd(t, nil, append(base, "--max-journal-bytes", "1", "hello")...)
	// Printed once: the daemon's log line of the refusal is not printed too.
	if code != exitFailed || stdout != "" || !containsAll(stderr, "dshd: The prompt was not run", "--max-journal-bytes (1)") || strings.Count(stderr, "--max-journal-bytes") != 1 {
		t.Fatalf("dshd prompt over --max-journal-bytes: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	// No file system has 4 EiB free: no session is made.
	const huge = "4611686018427387904"
	code, stdout, stderr = runDshd(t, nil, append(base, "--min-free-disk-bytes", huge, "hello")...)
	if code != exitFailed || stdout != "" || !containsAll(stderr, "dshd: The session was not created", "--min-free-disk-bytes ("+huge+")", filepath.Join(state, "sessions"), "free") || strings.Count(stderr, "--min-free-disk-bytes") != 1 {
		t.Fatalf("dshd prompt under --min-free-disk-bytes: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if n := len(journals(t, state)); n != 0 {
		t.Fatalf("refused runs left %d journals", n)
	}
	// The new session's own journal passes a one-byte bound of them all.
	code, stdout, stderr = runDshd(t, nil, append(base, "--max-state-bytes", "1", "hello")...)
	if code != exitFailed || stdout != "" || !containsAll(stderr, "dshd: The prompt was not run", "--max-state-bytes (1)", filepath.Join(state, "sessions")) || strings.Count(stderr, "--max-state-bytes") != 1 {
		t.Fatalf("dshd prompt over --max-state-bytes: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	// 0 turns each bound off.
	code, _, stderr = runDshd(t, nil, append(base, "--max-journal-bytes", "0", "--min-free-disk-bytes", "0", "--max-state-bytes", "0", "hello")...)
	if code != exitOK {
		t.Fatalf("dshd prompt with the bounds off: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestABadDiskBoundStopsDshdAtStart(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "a negative journal bound", args: []string{"--max-journal-bytes", "-1"}, want: []string{"--max-journal-bytes", `"-1"`, "want 0 or more"}},
		{name: "a journal bound that is no number", args: []string{"--max-journal-bytes", "abc"}, want: []string{"--max-journal-bytes", `"abc"`}},
		{name: "a negative free-space bound", args: []string{"--min-free-disk-bytes", "-1"}, want: []string{"--min-free-disk-bytes", `"-1"`, "want 0 or more"}},
		{name: "a free-space bound from the environment that is no number", env: []string{"DSHD_MIN_FREE_DISK_BYTES=1GB"}, want: []string{"DSHD_MIN_FREE_DISK_BYTES", `"1GB"`}},
		{name: "a journal bound in the file", file: `{"maxJournalBytes": -5}`, want: []string{"FILE:1:", "maxJournalBytes", "-5"}},
		{name: "a negative state bound", args: []string{"--max-state-bytes", "-1"}, want: []string{"--max-state-bytes", `"-1"`, "want 0 or more"}},
		{name: "a state bound that is no number", args: []string{"--max-state-bytes", "abc"}, want: []string{"--max-state-bytes", `"abc"`}},
		{name: "a state bound from the environment that is no number", env: []string{"DSHD_MAX_STATE_BYTES=1GiB"}, want: []string{"DSHD_MAX_STATE_BYTES", `"1GiB"`}},
	})
}

// sessionsBytes is what the journals and their sidecars in state's
// sessions directory hold.
func sessionsBytes(t *testing.T, state string) int64 {
	t.Helper()
	var n int64
	for _, journal := range journals(t, state) {
		// The sidecar beside <id>.jsonl is <id>.json.
		for _, path := range []string{journal, strings.TrimSuffix(journal, "l")} {
			if fi, err := os.Stat(path); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

func TestMaxStateBytesBoundsAllSessionsUntilOneIsDeleted(t *testing.T) {
	// Two sessions take turns: neither journal is near a bound of its
	// own, together they pass the state directory's.
	const limit = 32 << 10
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--model", "scripted", "--state-dir", state, "--max-state-bytes", fmt.Sprint(limit)}
	ctx, p := testkit.Context(t), start(t, opts{}, args...)
	c := stdioWire(p)
	sids := []string{c.openSession(ctx, cwd), c.newSession(ctx, cwd)}
	pad := strings.Repeat("x", 300)
	var refused *rpcErr
	var before int64
	turns := 0
	for ; turns < 400 && refused == nil; turns++ {
		before = sessionsBytes(t, state)
		refused = c.promptOrRefusal(ctx, sids[turns%2], fmt.Sprintf("turn %d:%s", turns, pad))
	}
	if refused == nil {
		t.Fatalf("400 turns ran with the state directory bounded to %d bytes: it holds %d", limit, sessionsBytes(t, state))
	}
	if turns < 4 {
		t.Fatalf("turn %d was refused already; the test needs turns that fit", turns)
	}
	if before < limit {
		t.Fatalf("a prompt was refused while the sessions held %d bytes, under the bound (%d)", before, limit)
	}
	sessions := filepath.Join(state, "sessions")
	if !containsAll(refused.Message, "not run", "--max-state-bytes", fmt.Sprint(limit), sessions, "dshd sessions delete") {
		t.Fatalf("the refused prompt answered %v", refused)
	}
	var data struct {
		Setting string `json:"setting"`
		Dir     string `json:"dir"`
		Bytes   int64  `json:"bytes"`
	}
	if err := json.Unmarshal(refused.Data, &data); err != nil || data.Setting != "--max-state-bytes" || data.Dir != sessions || data.Bytes < limit {
		t.Fatalf("the refusal's data is %s, want the setting, the sessions directory and its bytes", refused.Data)
	}
	sizes := []int64{journalSize(t, state, sids[0]), journalSize(t, state, sids[1])}
	n := len(journals(t, state))
	// Each session is refused now, and so is a new one, and a fork.
	for _, sid := range sids {
		if e := c.callFail(ctx, "session/prompt", promptParams(sid, "one more")); !containsAll(e.Message, "not run", "--max-state-bytes") {
			t.Fatalf("a prompt on %s at the bound answered %v", sid, e)
		}
	}
	if e := c.callFail(ctx, "session/new", newParams(cwd)); !containsAll(e.Message, "not created", "--max-state-bytes", sessions) {
		t.Fatalf("session/new at the bound answered %v", e)
	}
	if e := c.callFail(ctx, "session/fork", map[string]any{"sessionId": sids[0], "cwd": cwd, "mcpServers": []any{}}); !containsAll(e.Message, "not forked", "--max-state-bytes") {
		t.Fatalf("session/fork at the bound answered %v", e)
	}
	if got := len(journals(t, state)); got != n {
		t.Fatalf("the refusals left %d journals, there were %d", got, n)
	}
	for i, sid := range sids {
		if got := journalSize(t, state, sid); got != sizes[i] {
			t.Fatalf("the refusals changed %s's journal from %d to %d bytes", sid, sizes[i], got)
		}
	}
	if got := strings.Count(p.stderr.String(), session.LogStateBound); got != 1 {
		t.Fatalf("the bound was logged %d times, want once; stderr:\n%s", got, p.stderr)
	}
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}

	// A fresh daemon counts what the state directory holds when it
	// starts: it refuses too.
	p1 := start(t, opts{}, args...)
	c1 := stdioWire(p1)
	c1.initialize(ctx, nil)
	if e := c1.callFail(ctx, "session/new", newParams(cwd)); !containsAll(e.Message, "not created", "--max-state-bytes", sessions) {
		t.Fatalf("session/new in a fresh daemon at the bound answered %v", e)
	}

	// Deleting one session makes room, also for the daemon that is
	// running: another process removed files from the directory, so it
	// counts again before it refuses.
	if code, _, stderr := sessionsCmd(t, state, "delete", sids[0]); code != exitOK {
		t.Fatalf("dshd sessions delete: exit %d; stderr:\n%s", code, stderr)
	}
	if got := sessionsBytes(t, state); got >= limit {
		t.Fatalf("after the delete the sessions hold %d bytes, still at the bound %d", got, limit)
	}
	c1.endTurn(ctx, c1.newSession(ctx, cwd), "a new session after the delete")
	c1.closer.Close()
	if code := p1.wait(ctx); code != 0 {
		t.Fatalf("the second dshd exited %d; stderr:\n%s", code, p1.stderr)
	}
	// And a fresh daemon serves the other session again.
	c2 := loadInFreshDaemon(ctx, t, sids[1], cwd, nil, args...)
	c2.endTurn(ctx, sids[1], "after the delete")
}
