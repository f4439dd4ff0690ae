// End-to-end tests of a session that cannot save (its state directory a
// full tmpfs): a mode, model or thinking change is refused and not made, a
// session/new or fork says why it was not made, and a session/close says
// what it could not save; nothing is answered success that a crash loses.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// fillDisk fills the file system of disk (a small tmpfs) to the last free
// block with a file it returns, whose removal gives the space back.
func fillDisk(t *testing.T, disk string) string {
	t.Helper()
	filler := filepath.Join(disk, "filler")
	err := os.WriteFile(filler, make([]byte, freeBytes(t, disk)), 0o600)
	if err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if free := freeBytes(t, disk); free != 0 {
		t.Fatalf("the filler left %d bytes free", free)
	}
	return filler
}

// cannotSave prompts sid until a turn is refused as not saved: from then
// on its journal holds records it could not write, as a session does once
// its disk filled during a turn.
func (c *wire) cannotSave(ctx context.Context, sid string) {
	c.t.Helper()
	pad := strings.Repeat("x", 1000)
	for range 100 {
		if e := c.promptOrRefusal(ctx, sid, pad); e != nil {
			if !containsAll(e.Message, "not saved", "no space left on device") {
				c.t.Fatalf("the turn on the full disk answered %v", e)
			}
			return
		}
	}
	c.t.Fatalf("100 turns on a full disk all ended%s", c.stderrTail())
}

// wantUnsaved fails the test unless e is the answer of a request that was
// refused because the session cannot save: what it says was not done,
// the disk's reason in its message and its data {reason, saved: false}.
func wantUnsaved(t *testing.T, e *rpcErr, what string) {
	t.Helper()
	var data struct {
		Reason string `json:"reason"`
		Saved  *bool  `json:"saved"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || e.Code != -32603 ||
		!containsAll(e.Message, what, "no space left on device") ||
		!strings.Contains(data.Reason, "no space left on device") || data.Saved == nil || *data.Saved {
		t.Fatalf("answered %v, want -32603 %q naming the disk's reason, with data {reason, saved: false}", e, what)
	}
}

// loadedState loads sid in a fresh dshd started with args and returns its
// client, its current mode and the current value of its thinking option.
func loadedState(ctx context.Context, t *testing.T, sid, cwd string, args ...string) (p *proc, c *wire, mode, thinking string) {
	t.Helper()
	p = start(t, opts{}, args...)
	c = stdioWire(p)
	c.initialize(ctx, nil)
	var res struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue any    `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &res)
	for _, o := range res.ConfigOptions {
		if o.ID == "thinking" {
			thinking, _ = o.CurrentValue.(string)
		}
	}
	return p, c, res.Modes.CurrentModeID, thinking
}

func TestAStateChangeTheSessionCannotSaveIsRefusedAndNotMade(t *testing.T) {
	disk := smallTmpfs(t, "512k")
	ctx := testkit.Context(t)
	state, cwd := filepath.Join(disk, "state"), t.TempDir()
	args := []string{"--model", "scripted", "--state-dir", state, "--min-free-disk-bytes", "0", "--mode", "yolo"}
	p := start(t, opts{}, args...)
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "while there is room")
	filler := fillDisk(t, disk)
	c.cannotSave(ctx, sid)

	changes := func() int {
		return count(c.updates(sid), "current_mode_update") + count(c.updates(sid), "config_option_update")
	}
	before := changes()
	for _, r := range []struct {
		method, what string
		params       map[string]any
	}{
		{"session/set_mode", "The mode was not changed", map[string]any{"sessionId": sid, "modeId": "ask"}},
		{"session/set_config_option", "The mode was not changed", map[string]any{"sessionId": sid, "configId": "mode", "value": "accept-edits"}},
		{"session/set_config_option", "The model was not changed", map[string]any{"sessionId": sid, "configId": "model", "value": "scripted"}},
		{"session/set_config_option", "Thinking was not changed", map[string]any{"sessionId": sid, "configId": "thinking", "value": "off"}},
	} {
		wantUnsaved(t, c.callFail(ctx, r.method, r.params), r.what)
	}
	if n := changes() - before; n != 0 {
		t.Fatalf("the refused changes sent %d mode or config option updates", n)
	}

	// Nothing of a session is made while the disk is full, and the answer
	// says why in a sentence.
	wantUnsaved(t, c.callFail(ctx, "session/new", newParams(cwd)), "The session was not created")
	wantUnsaved(t, c.callFail(ctx, "session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), "The session was not forked")
	if got := journals(t, state); len(got) != 1 {
		t.Fatalf("the state directory holds the journals %v, want only the session's", got)
	}

	// A crash, then space returns: the session loads as it was saved.
	p.signal(syscall.SIGKILL)
	p.wait(ctx)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	p, c, mode, thinking := loadedState(ctx, t, sid, cwd, args...)
	if mode != "yolo" || thinking != "on" {
		t.Fatalf("after the crash the session loads in mode %q with thinking %q, want what was saved: yolo, on", mode, thinking)
	}

	// Once the session can save, a change is made, and a crash keeps it.
	c.call(ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "ask"}, nil)
	c.call(ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "thinking", "value": "off"}, nil)
	p.signal(syscall.SIGKILL)
	p.wait(ctx)
	if _, _, mode, thinking = loadedState(ctx, t, sid, cwd, args...); mode != "ask" || thinking != "off" {
		t.Fatalf("the changes acknowledged once space returned load as mode %q, thinking %q", mode, thinking)
	}
}

func TestASessionClosedWhileItCannotSaveIsClosedAndSaysWhatWasNotSaved(t *testing.T) {
	disk := smallTmpfs(t, "512k")
	ctx := testkit.Context(t)
	state, cwd := filepath.Join(disk, "state"), t.TempDir()
	p := start(t, opts{}, "--model", "scripted", "--state-dir", state, "--min-free-disk-bytes", "0")
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "while there is room")
	filler := fillDisk(t, disk)
	c.cannotSave(ctx, sid)

	e := c.callFail(ctx, "session/close", map[string]any{"sessionId": sid})
	wantUnsaved(t, e, "The session was closed")
	if !strings.Contains(e.Message, "not saved") {
		t.Fatalf("the close answered %v, want it to say what was not saved", e)
	}
	if e := c.callFail(ctx, "session/prompt", promptParams(sid, "after the close")); e.Code != -32002 {
		t.Fatalf("a prompt of the closed session answered %v, want -32002 (not found)", e)
	}
	if !strings.Contains(p.stderr.String(), "closed without saving") {
		t.Fatalf("the close was not logged as unsaved; stderr:\n%s", p.stderr)
	}

	// Closed for good: the same daemon loads it again once space returns,
	// with what was saved.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	replayed := false
	for _, n := range c.updates(sid) {
		replayed = replayed || n.Kind == "user_message_chunk" && strings.Contains(string(n.Update), "while there is room")
	}
	if !replayed {
		t.Fatal("the load did not replay the saved turn")
	}
	c.endTurn(ctx, sid, "after space returned")
}
