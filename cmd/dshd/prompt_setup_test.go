// End-to-end tests of what `dshd prompt` gives its session besides the
// cwd: the MCP servers of --mcp-config and the directories of --add-dir,
// which a CI job could not give before (only an editor's session/new
// could), and the mistakes in them, each one line and exit 2.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

func TestPrompt_MCPConfigGivesTheSessionItsServers(t *testing.T) {
	cwd := t.TempDir()
	written := filepath.Join(cwd, "by-mcp.txt")
	config := testkit.Write(t, t.TempDir(), "mcp.json", mustJSON(t, map[string]any{"mcpServers": map[string]any{
		"writer": map[string]any{"command": testkit.Executable(t), "env": map[string]string{asMCPWriter: "1", "GORACE": "atexit_sleep_ms=0"}},
	}}))
	srv := fakeModel(t)
	srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "mcp__writer__write", Arguments: mustJSON(t, map[string]string{"path": written})}}},
		openaitest.Text("done"),
	)
	args := []string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--cwd", cwd,
		"--mcp-config", config, "--yes", "write it"}
	code, stdout, stderr := runDshd(t, nil, args...)
	if code != 0 || stdout != "done\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	reqs := srv.ChatRequests()
	if !slices.Contains(toolNames(reqs[0]), "mcp__writer__write") {
		t.Fatalf("the model was not offered the server's tool: %v", toolNames(reqs[0]))
	}
	if got, err := os.ReadFile(written); err != nil || string(got) != "written by the MCP server" {
		t.Fatalf("the server's tool did not run: %q, %v; the model was told %q", got, err, toolResults(srv))
	}
}

func TestPrompt_AddDirLetsTheSessionReadThere(t *testing.T) {
	other := t.TempDir()
	notes := testkit.Write(t, other, "notes.txt", "THE NOTES")
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"with --add-dir", []string{"--add-dir", other}, "THE NOTES"},
		// Without it the same read is refused: the flag is what lets it.
		{"without", nil, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			srv.Enqueue(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "read_file", Arguments: mustJSON(t, map[string]string{"path": notes})}}},
				openaitest.Text("read"),
			)
			code, _, stderr := runDshd(t, nil, promptArgs(t, srv, append(tc.extra, "read the notes")...)...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if got := toolResults(srv); len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("the model was told %q, want it to say %q", got, tc.want)
			}
		})
	}
}

// Each mistake is one line naming the flag and what is wrong, exit 2,
// before any model call.
func TestPrompt_MistakesInMCPConfigAndAddDirAreOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string { return testkit.Write(t, dir, name, text) }
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"an unknown key", []string{"--mcp-config", file("key.json", `{"mcpServers":{"a":{"comand":"x"}}}`)}, []string{"--mcp-config", "key.json: a", `unknown field "comand"`}},
		{"a command not found", []string{"--mcp-config", file("cmd.json", `{"mcpServers":{"a":{"command":"no-such-program-dshd"}}}`)}, []string{"--mcp-config", "cmd.json: a", `command "no-such-program-dshd"`, "not found"}},
		{"an http server with a command", []string{"--mcp-config", file("mix.json", `{"mcpServers":{"h":{"type":"http","url":"http://x","command":"sh"}}}`)}, []string{"mix.json: h", "an http server takes url and headers"}},
		{"an unknown type", []string{"--mcp-config", file("type.json", `{"mcpServers":{"w":{"type":"ws","url":"ws://x"}}}`)}, []string{"type.json: w", `type "ws"`}},
		{"no mcpServers", []string{"--mcp-config", file("none.json", `{}`)}, []string{"none.json", `no "mcpServers" object`}},
		{"a missing file", []string{"--mcp-config", filepath.Join(dir, "gone.json")}, []string{"gone.json", "no such file"}},
		{"a missing directory", []string{"--add-dir", filepath.Join(dir, "gone")}, []string{"--add-dir", "gone", "no such directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, append(tc.args, "hi")...)...)
			if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || len(srv.ChatRequests()) != 0 {
				t.Fatalf("exit %d, stdout %q, %d model calls; stderr:\n%s", code, stdout, len(srv.ChatRequests()), stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
