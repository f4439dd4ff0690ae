// This file tests that a load or resume refused because another
// connection holds the session changes nothing on disk.

package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
