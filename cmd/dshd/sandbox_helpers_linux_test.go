// Helpers of the end-to-end tests of acp children in dshd's sandbox.

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// scriptedChild returns this test binary, which is dshd, and a script on
// which a child dshd answers "child says: " and the prompt it was given.
func scriptedChild(t *testing.T) (exe, script string) {
	t.Helper()
	return testkit.Executable(t), testkit.Write(t, t.TempDir(), "child.json", `{"rules": [{"text": "child says: {{user}}"}]}`)
}

// delegateOnce runs one dshd prompt in ws, in the default sandbox, whose
// model delegates to tool, and returns what the tool answered and
// dshd's stderr.
func delegateOnce(t *testing.T, tool string, env []string, ws string, args ...string) (result, stderr string) {
	t.Helper()
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("parent done")
		}
		return subagentCall("call_1", tool, "hello child")
	})
	code, stdout, stderr := runDshd(t, env, append([]string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "",
		"--state-dir", t.TempDir(), "--cwd", ws, "--mode", "yolo"}, append(args, "delegate")...)...)
	if code != 0 || stdout != "parent done\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	return strings.Join(toolResults(srv), "\n"), stderr
}

// mcpProbe starts a session whose one stdio MCP server runs the shell
// script probe and exits, and returns what the script printed.
func mcpProbe(ctx context.Context, t *testing.T, c *wire, probe string) string {
	t.Helper()
	ws := t.TempDir()
	report := filepath.Join(ws, "report.txt")
	server := map[string]any{"name": "probe", "command": "/bin/sh", "env": []any{},
		"args": []any{"-c", "{ " + probe + "\n} > " + report + " 2>&1; echo probed >&2; exit 1"}}
	var res newResult
	c.call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{server}}, &res)
	// The server exits after its probe: dshd warns that it failed.
	c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(dump(ns), `MCP server \"probe\"`) })
	out, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
