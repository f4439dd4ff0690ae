// End-to-end tests of the files a repository controls and dshd reads
// itself: a command file, an agent definition's schema file, a .gitignore
// that is a FIFO or leads to /dev/zero or out of the workspace is refused
// with a warning naming it, without a wait and without reading the
// device; the session works on, and SIGTERM ends the daemon.

package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// warnedAbout waits for a warning naming file and saying want, and fails
// the test otherwise.
func warnedAbout(ctx context.Context, t *testing.T, c *wire, sid, file, want string) {
	t.Helper()
	ups := c.waitUpdates(ctx, sid, func(ns []note) bool { return strings.Contains(text(ns), "⚠ "+file) })
	got := text(ups)
	if !strings.Contains(got, "⚠ "+file) || !strings.Contains(got, want) {
		t.Fatalf("no warning naming %s and saying %q: %q%s", file, want, got, c.stderrTail())
	}
}

// The lead's case: `dshd prompt` in a workspace whose command directory
// holds a FIFO hung for ever, and SIGTERM did not end it.
func TestWorkspaceFiles_PromptWithAFIFOCommandFileWarnsAndAnswers(t *testing.T) {
	ws := t.TempDir()
	fifo := testkit.FIFO(t, ws, ".dshd/commands/hang.md")
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", ws, "hello")
	if code != 0 || stdout != "You said: hello\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "⚠ "+fifo+": a named pipe (FIFO), not a regular file") {
		t.Fatalf("the FIFO is not named in a warning:\n%s", stderr)
	}
}

func TestWorkspaceFiles_ACommandFileThatIsAFIFOOrADeviceIsAWarning(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(t *testing.T, ws string) string
	}{
		{"a FIFO", "a named pipe (FIFO), not a regular file", func(t *testing.T, ws string) string { return testkit.FIFO(t, ws, ".dshd/commands/hang.md") }},
		// /dev/zero is outside the workspace: refused as such, unopened.
		{"a link to the zero device", "leads outside the workspace", func(t *testing.T, ws string) string { return testkit.LinkToZero(t, ws, ".claude/commands/zero.md") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			ws := t.TempDir()
			testkit.Write(t, ws, ".dshd/commands/fine.md", "Say fine: $ARGUMENTS\n")
			bad := tc.make(t, ws)
			srv, p, c := modelDaemon(t, answer("ok"))
			sid := c.openSession(ctx, ws)
			warnedAbout(ctx, t, c, sid, bad, tc.want)
			c.endTurn(ctx, sid, "/fine now")
			if got := srv.ChatRequests()[0].LastUserText(); got != "Say fine: now" {
				t.Fatalf("the good command sent %q", got)
			}
			endsOnSIGTERM(ctx, t, p)
		})
	}
}

// A workspace definition's outputSchema may name only a file in the
// workspace; a FIFO there, or a device, is refused as well. The
// definition's tool is not offered, the file's text reaches nobody, the
// other definitions work.
func TestWorkspaceFiles_ADefinitionsSchemaFileOutsideOrAFIFOOrADeviceIsAWarning(t *testing.T) {
	outside := t.TempDir()
	secret := testkit.Write(t, outside, ".docker/config.json", `{"auths": {"registry.example": {"auth": "SECRET-TOKEN"}}}`)
	for _, tc := range []struct {
		name, schema, want string
		make               func(t *testing.T, ws string)
	}{
		{"a file outside the workspace", secret, secret + " is outside the workspace", nil},
		{"a FIFO", "answer.json", "answer.json: a named pipe (FIFO), not a regular file", func(t *testing.T, ws string) { testkit.FIFO(t, ws, ".dshd/agents/answer.json") }},
		{"the zero device", "/dev/zero", "/dev/zero is outside the workspace", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			ws := t.TempDir()
			agentFile(t, ws, ".dshd/agents", "fine.md", "---\ndescription: Fine.\n---\n")
			bad := agentFile(t, ws, ".dshd/agents", "bad.md", "---\ndescription: Bad.\noutputSchema: "+tc.schema+"\n---\n")
			if tc.make != nil {
				tc.make(t, ws)
			}
			srv, p, c := modelDaemon(t, answer("ok"))
			sid := c.openSession(ctx, ws)
			warnedAbout(ctx, t, c, sid, bad+":3:1: outputSchema: ", tc.want)
			c.endTurn(ctx, sid, "hello")
			req := srv.ChatRequests()[0]
			if names := toolNames(req); !slices.Contains(names, "fine") || slices.Contains(names, "bad") {
				t.Fatalf("the model was offered %v", names)
			}
			if raw, _ := json.Marshal(req); strings.Contains(string(raw), "SECRET-TOKEN") {
				t.Fatal("the file outside the workspace reached the model")
			}
			endsOnSIGTERM(ctx, t, p)
		})
	}
}

// A .gitignore that is a FIFO hung grep below it (and glob) for ever; now
// the search answers, saying the file was not used.
func TestWorkspaceFiles_GrepUnderAFIFOGitignoreAnswersAndSaysSo(t *testing.T) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	testkit.FIFO(t, ws, ".gitignore")
	testkit.Write(t, ws, "sub/a.txt", "the needle\n")
	grep, _ := json.Marshal(map[string]string{"pattern": "needle", "path": "sub"})
	srv, p, c := modelDaemon(t, func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("done")
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "g1", Name: "grep", Arguments: string(grep)}}}
	})
	sid := c.openSession(ctx, ws)
	c.endTurn(ctx, sid, "find the needle")
	results := toolResults(srv)
	if len(results) != 1 || !strings.Contains(results[0], "sub/a.txt:1:the needle") ||
		!strings.Contains(results[0], ".gitignore was not used, so its rules were not applied: a named pipe (FIFO), not a regular file") {
		t.Fatalf("grep answered %q", results)
	}
	endsOnSIGTERM(ctx, t, p)
}
