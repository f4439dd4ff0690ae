// End-to-end test of a subagent bound with deny-permissions (issue 11,
// item 16): what it may not do is refused without asking anyone, and it
// is told so, not that a user rejected it.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

const denyScript = `{"rules": [
  {"user": "(?m)^Write the note", "step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "x"}}]},
  {"user": "(?m)^Write the note", "step": 1, "text": "CHILD-GOT: {{tool}}"},
  {"user": "delegate", "step": 0, "toolCalls": [{"name": "reader", "arguments": {"description": "note", "prompt": "Write the note"}}]},
  {"user": "delegate", "step": 1, "text": "PARENT-GOT: {{tool}}"}
]}`

// childWritesNote is a child's write of note.txt, which its parent's
// permission gate decides.
var childWritesNote = openaitest.ToolCall{ID: "c1", Name: "write_file", Arguments: `{"path":"note.txt","content":"x"}`}

func TestADenyPermissionsChildIsNotToldAUserRejectedIt(t *testing.T) {
	ctx := testkit.Context(t)
	_, c := stdioDaemon(t, writeScript(t, denyScript), t.TempDir(), "--subagent", "reader=spawn,deny-permissions")
	var asked atomic.Int32
	c.handleRequests(func(m *msg) (any, *rpcErr) {
		if m.Method == "session/request_permission" {
			asked.Add(1)
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil
		}
		return nil, notFound
	})
	sid := c.openSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "delegate it")
	got := text(c.updates(sid))
	_, child, ok := strings.Cut(got, "CHILD-GOT:")
	if !ok {
		t.Fatalf("no child answer in %q", got)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the editor was asked %d times for a child that may not ask", n)
	}
	if strings.Contains(child, "user") {
		t.Fatalf("the child was told about a user: %q", child)
	}
	if !strings.Contains(child, "without asking") {
		t.Fatalf("the child was told %q, want that it was refused without asking anyone", child)
	}
}

// TestADenyPermissionsACPChildIsNotToldAUserRejectedIt: a child dshd
// asks its parent, whose binding refuses without asking anyone; the
// parent says so in its answer, and the child tells its model that.
func TestADenyPermissionsACPChildIsNotToldAUserRejectedIt(t *testing.T) {
	ctx := testkit.Context(t)
	srv := fakeModel(t)
	delegation{via: "ro", call: childWritesNote}.serve(srv)
	p, w := fakeDaemon(t, srv, "--mode", "yolo", "--subagent", "ro=acp,deny-permissions")
	cwd := t.TempDir()
	w.endTurn(ctx, w.openSession(ctx, cwd), "delegate this")
	got := childToolResult(srv)
	if !strings.Contains(got, "refused without asking anyone") || strings.Contains(got, "user") {
		t.Fatalf("the child's model was told %q, want a refusal that asked nobody; stderr:\n%s", got, p.stderr)
	}
	if _, err := os.Stat(filepath.Join(cwd, "note.txt")); err == nil {
		t.Fatal("the refused child wrote the file")
	}
}
