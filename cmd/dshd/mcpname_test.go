// End-to-end tests of MCP stdio servers given by bare name (issue 11,
// item 13): the command is found through the PATH the server gets, and an
// entry that cannot be used is a warning, never a failed session.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// echoScript has the model call the everything server's echo tool.
const echoScript = `{"rules": [
  {"user": "echo", "step": 0, "toolCalls": [{"name": "mcp__everything__echo", "arguments": {"message": "hello by name"}}]},
  {"user": "echo", "step": 1, "text": "The server said: {{tool}}"},
  {"text": "fine"}
]}`

func TestMCPStdioServerGivenByBareNameIsFoundThroughPATH(t *testing.T) {
	server := everythingServer(t)
	node := server["command"].(string)
	// A directory only the entry's own PATH names, holding the launcher
	// under a name found nowhere else.
	bin := t.TempDir()
	if err := os.Symlink(node, filepath.Join(bin, "dshd-test-node")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		command string
		env     []any
	}{
		{"a name in dshd's PATH", "node", []any{}},
		{"a name in the PATH the entry sets", "dshd-test-node", []any{map[string]any{"name": "PATH", "value": bin + string(os.PathListSeparator) + os.Getenv("PATH")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			_, c := stdioDaemon(t, writeScript(t, echoScript), t.TempDir(), "--mode", "yolo")
			c.initialize(ctx, nil)
			entry := map[string]any{"name": "everything", "command": tc.command, "args": server["args"], "env": tc.env}
			raw, err := c.callErr(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{entry}})
			if err != nil {
				t.Fatalf("session/new with command %q: %v", tc.command, err)
			}
			var res newResult
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			if stop := c.prompt(ctx, res.SessionID, "echo please"); stop != "end_turn" {
				t.Fatalf("stop reason %q", stop)
			}
			if got := text(c.updates(res.SessionID)); !strings.Contains(got, "hello by name") {
				t.Fatalf("the model did not reach the server; it said %q", got)
			}
		})
	}
}

func TestABrokenMCPEntryIsAWarningAndTheSessionStarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry map[string]any
		want  string // in the warning
	}{
		{"a bare name found in no PATH", map[string]any{"name": "ghost", "command": "dshd-no-such-mcp-server", "args": []any{}, "env": []any{}}, "dshd-no-such-mcp-server"},
		{"a relative path to nothing", map[string]any{"name": "rel", "command": "./bin/missing-server", "args": []any{}, "env": []any{}}, "missing-server"},
		{"a command with a NUL byte", map[string]any{"name": "nul", "command": "bad\u0000name", "args": []any{}, "env": []any{}}, "nul"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			_, c := stdioDaemon(t, writeScript(t, echoScript), t.TempDir())
			c.initialize(ctx, nil)
			raw, err := c.callErr(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{tc.entry}})
			if err != nil {
				t.Fatalf("session/new failed for a broken MCP entry: %v", err)
			}
			var res newResult
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			ups := c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(text(ns), tc.want) })
			if !strings.Contains(text(ups), "⚠") {
				t.Fatalf("no warning: %s", dump(ups))
			}
			if stop := c.prompt(ctx, res.SessionID, "hi"); stop != "end_turn" {
				t.Fatalf("stop reason %q", stop)
			}
		})
	}
}
