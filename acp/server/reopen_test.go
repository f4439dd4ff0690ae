// This file tests reopening a session: a load or resume refused because
// another connection holds the session changes nothing on disk, and a
// depth limit a parent dshd gave still binds a resumed session.

package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
)

func TestARefusedLoadChangesNothingOnDisk(t *testing.T) {
	h := newHarness(t, hopts{})
	dirs := []string{t.TempDir()}
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, AdditionalDirectories: dirs, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	files, _ := filepath.Glob(filepath.Join(h.store.Dir(), string(sid)+".*"))
	before := map[string][]byte{}
	for _, f := range files {
		before[f], _ = os.ReadFile(f)
	}

	// Client B tries to take A's open session with other directories.
	h.connect(acp.ClientCapabilities{})
	_, err = h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, AdditionalDirectories: []string{"/"}})
	wantCode(t, "B's load of A's open session", err, -32602)
	_, err = h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd, AdditionalDirectories: []string{"/"}})
	wantCode(t, "B's resume of A's open session", err, -32602)

	list, err := h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.SessionID == sid && !slices.Equal(s.AdditionalDirectories, dirs) {
			t.Fatalf("after the refused load the session lists the directories %q, want A's %q", s.AdditionalDirectories, dirs)
		}
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, b) {
			t.Fatalf("the refused load changed %s", filepath.Base(f))
		}
	}
}

// nestScript delegates "nest" to an in-process child and reports what the
// subagent tool answered.
const nestScript = `{"rules": [
  {"user": "^nest", "step": 0, "toolCalls": [{"name": "subagent", "arguments": {"description": "d", "prompt": "inner task"}}]},
  {"user": "^inner task", "text": "inner answer"},
  {"user": "^nest", "text": "saw: {{tool}}"}
]}`

func TestAParentsDepthLimitBindsTheSessionWhenItIsResumed(t *testing.T) {
	h := newHarness(t, hopts{script: nestScript, mode: "yolo"})
	// What a parent dshd sends for a child at depth 1 of a tree limited
	// to depth 1; this daemon's own limit is the default 3.
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{},
		Meta: acp.Meta{"dshd.dev/depth": 1, "dshd.dev/maxDepth": 1}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	nest := func(when string) {
		t.Helper()
		h.ed.reset()
		h.mustPrompt(sid, "nest", acp.StopReasonEndTurn)
		if got := agentText(h.ed.of(sid)); strings.Contains(got, "inner answer") || !strings.Contains(got, "beyond the depth limit of 1") {
			t.Fatalf("%s the session delegated past its parent's limit: %q", when, got)
		}
	}
	nest("when new,")
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
		t.Fatal(err)
	}
	nest("resumed,")
}
