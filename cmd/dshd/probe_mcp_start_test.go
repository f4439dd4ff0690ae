package main

import (
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
)

// TestMCPServerThatNeverAnswersIsAWarningAfterTheStartTimeout: a stdio
// server that reads its stdin and never answers the handshake holds
// session/new up to --mcp-start-timeout only; the warning names the
// server and the wait, and the session works.
func TestMCPServerThatNeverAnswersIsAWarningAfterTheStartTimeout(t *testing.T) {
	ctx := testkit.Context(t)
	script := writeScript(t, `{"rules": [{"text": "fine"}]}`)
	_, c := stdioDaemon(t, script, t.TempDir(), "--mcp-start-timeout", "1s")
	c.initialize(ctx, nil)
	silent := map[string]any{"name": "silent", "command": "/bin/sh", "args": []any{"-c", "exec cat >/dev/null"}, "env": []any{}}
	var res newResult
	c.call(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{silent}}, &res)
	ups := c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(text(ns), "silent") })
	if got := text(ups); !strings.Contains(got, `"silent"`) || !strings.Contains(got, "within "+time.Second.String()) {
		t.Fatalf("no warning naming the server and the timeout: %s", dump(ups))
	}
	if stop := c.prompt(ctx, res.SessionID, "hi"); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
}
