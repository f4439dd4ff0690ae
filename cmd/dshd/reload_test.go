// End-to-end test of a thread reloaded on the same connection (issue 11,
// item 14): Zed-style clients send session/load for a session they have
// open, and get its conversation replayed again.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestLoadingASessionOpenOnTheSameConnectionReplaysItAgain(t *testing.T) {
	ctx := testkit.Context(t)
	_, c := stdioDaemon(t, writeScript(t, `{"rules": [{"text": "You said: {{user}}"}]}`), t.TempDir())
	c.initialize(ctx, nil)
	cwd := t.TempDir()
	sid := c.newSession(ctx, cwd)
	c.endTurn(ctx, sid, "first words")
	live := c.updates(sid)
	for round := 1; round <= 2; round++ {
		before := len(c.updates(sid))
		c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
		replay := c.updates(sid)[before:]
		checkReplay(t, live, replay, "first words")
	}
	// The session is the same live one: it takes the next prompt.
	c.endTurn(ctx, sid, "second words")
	if got := text(c.updates(sid)); !strings.HasSuffix(got, "You said: second words") {
		t.Fatalf("the agent said %q", got)
	}
	// A different cwd is still refused.
	if e := c.callFail(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": t.TempDir(), "mcpServers": []any{}}); e.Code != -32602 {
		t.Fatalf("load with another cwd: %v, want -32602", e)
	}
}
