package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools/mcp/mcptest"
)

// everythingServer is the stdio MCP server from npm that `make npm`
// installs for the tools/mcp tests; the test skips without it.
func everythingServer(t *testing.T) map[string]any {
	t.Helper()
	node, script := mcptest.Everything(t, "../../tools/mcp")
	return map[string]any{"name": "everything", "command": node, "args": []string{script, "stdio"}, "env": []any{}}
}

// TestMCPToolCalledEndToEnd: the scripted model calls a tool of a real MCP
// server passed in session/new, through the daemon, and reads its answer.
func TestMCPToolCalledEndToEnd(t *testing.T) {
	server := everythingServer(t)
	ctx := testkit.Context(t)
	script := writeScript(t, `{"rules": [
  {"user": "echo", "step": 0, "toolCalls": [{"name": "mcp__everything__echo", "arguments": {"message": "hello from dshd"}}]},
  {"user": "echo", "step": 1, "text": "The server said: {{tool}}"}
]}`)
	_, c := stdioDaemon(t, script, t.TempDir(), "--mode", "yolo")
	c.initialize(ctx, nil)
	cwd := t.TempDir()
	var res newResult
	c.call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{server}}, &res)
	if stop := c.prompt(ctx, res.SessionID, "echo please"); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	ups := c.updates(res.SessionID)
	var called, completed bool
	for _, n := range ups {
		var u struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(n.Update, &u)
		switch {
		case n.Kind == "tool_call" && strings.Contains(string(n.Update), "hello from dshd"):
			called = true
		case n.Kind == "tool_call_update" && u.Status == "completed":
			completed = true
		}
	}
	if !called || !completed {
		t.Fatalf("the MCP tool call was not announced and completed: %s", dump(ups))
	}
	if got := text(ups); !strings.Contains(got, "hello from dshd") {
		t.Fatalf("the model did not get the MCP server's answer; it said %q", got)
	}
}

// TestMCPServerThatFailsToStartIsAWarningAndTheSessionWorks: a broken MCP
// server entry gives the editor a clear warning and the session goes on
// without it.
func TestMCPServerThatFailsToStartIsAWarningAndTheSessionWorks(t *testing.T) {
	ctx := testkit.Context(t)
	script := writeScript(t, `{"rules": [{"text": "fine"}]}`)
	_, c := stdioDaemon(t, script, t.TempDir())
	c.initialize(ctx, nil)
	var res newResult
	broken := map[string]any{"name": "broken", "command": "/nonexistent/mcp-server", "args": []any{}, "env": []any{}}
	c.call(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{broken}}, &res)
	ups := c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(text(ns), "broken") })
	if !strings.Contains(text(ups), "broken") {
		t.Fatalf("no warning naming the server: %s", dump(ups))
	}
	if stop := c.prompt(ctx, res.SessionID, "hi"); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
}
