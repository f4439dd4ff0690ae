// Tests of warnings outside the conversation (Conn.Warn): a notice for a
// client that advertised session.notices, the old "⚠" message for any
// other, never recorded, never replayed.

package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/tools"
)

var noticeCaps = acp.ClientCapabilities{Session: acp.ClientSessionCapabilities{Notices: &acp.EmptyCapability{}}}

// quiet turns the setup warnings of warningHarness off, so that what a
// load sends before its answer is told from what follows it.
var quiet atomic.Bool

// warningHarness is a server whose sessions each show one setup warning
// and connect one MCP server that fails.
func warningHarness(t *testing.T, caps acp.ClientCapabilities) *harness {
	quiet.Store(false)
	return newHarness(t, hopts{caps: caps, opts: func(o *server.Options) {
		o.SetupWarnings = func() []server.Warning {
			if quiet.Load() {
				return nil
			}
			return []server.Warning{{Title: "Commands run unconfined", Detail: "this kernel has no Landlock"}}
		}
		o.ConnectMCP = func(context.Context, string, []string, []acp.McpServer, *tools.Registry) (func(), []string) {
			return func() {}, []string{`MCP server "docs": start: no such file`}
		}
	}})
}

func (h *harness) newSessionWithMCP() acp.SessionID {
	h.t.Helper()
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{
		&acp.McpServerStdio{Name: "docs", Command: "/nonexistent/docs-mcp"},
	}})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.SessionID
}

// waitUsage waits for the usage_update that follows the setup warnings.
func (h *harness) waitUsage(sid acp.SessionID) {
	h.ed.waitUntil(h.ctx, h.t, "the setup usage_update", func() bool {
		return len(ofType[*acp.UsageUpdate](h.ed.of(sid))) > 0
	})
}

func TestWarningsAreNoticesForAClientThatAdvertisedThem(t *testing.T) {
	h := warningHarness(t, noticeCaps)
	sid := h.newSessionWithMCP()
	h.waitUsage(sid)
	notices := ofType[*acp.Notice](h.ed.of(sid))
	if len(notices) != 2 {
		t.Fatalf("%d notices, want the setup warning and the MCP one: %+v", len(notices), notices)
	}
	if n := notices[0]; n.Severity != acp.NoticeWarning || n.Title != "Commands run unconfined" || n.Description != "this kernel has no Landlock" {
		t.Errorf("setup notice %+v", n)
	}
	if n := notices[1]; n.Severity != acp.NoticeWarning || !strings.Contains(n.Title, `MCP server "docs"`) {
		t.Errorf("MCP notice %+v", n)
	}
	if got := agentText(h.ed.of(sid)); got != "" {
		t.Errorf("a notice-aware client also got the agent message %q", got)
	}
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	noWarningReplayed(t, h, sid)
}

func TestWarningsAreAgentMessagesForAnyOtherClient(t *testing.T) {
	h := warningHarness(t, acp.ClientCapabilities{})
	sid := h.newSessionWithMCP()
	h.waitUsage(sid)
	if n := ofType[*acp.Notice](h.ed.of(sid)); len(n) > 0 {
		t.Fatalf("a notice sent to a client without session.notices: %+v", n)
	}
	got := agentText(h.ed.of(sid))
	want := "⚠ Commands run unconfined: this kernel has no Landlock\n⚠ MCP server \"docs\": start: no such file\n"
	if got != want {
		t.Errorf("agent text %q, want %q", got, want)
	}
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	noWarningReplayed(t, h, sid)
}

// noWarningReplayed closes sid, loads it on a new connection and checks
// that the replay has neither a notice nor a "⚠" message.
func noWarningReplayed(t *testing.T, h *harness, sid acp.SessionID) {
	t.Helper()
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h.ed.reset()
	quiet.Store(true) // the load's own warnings would follow its answer
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := h.ed.of(sid)
	if n := ofType[*acp.Notice](replay); len(n) > 0 {
		t.Errorf("the replay has notices: %+v", n)
	}
	if got := agentText(replay); strings.Contains(got, "⚠") || got != "You said: hello" {
		t.Errorf("replayed agent text %q, want only the answer", got)
	}
}
