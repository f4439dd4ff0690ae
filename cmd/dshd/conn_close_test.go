//go:build unix

// End-to-end test of a session that finishes opening after its
// connection began to close: it is closed at once, not left open with
// nobody to close it.

package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// slowMCP is an MCP server entry whose process says on the FIFO started
// that it runs and never answers the handshake, so the session/new or
// load that starts it waits until its request is cancelled
// (--mcp-start-timeout is long). The FIFO is in dir, the session's cwd,
// which the sandbox of MCP servers lets it write.
func slowMCP(t *testing.T, dir string) (server map[string]any, started string) {
	t.Helper()
	started = testkit.FIFO(t, dir, "started")
	script := "echo > " + started + " && exec cat >/dev/null"
	return map[string]any{"name": "slow", "command": "/bin/sh", "args": []any{"-c", script}, "env": []any{}}, started
}

// TestASessionOpenedAsItsConnectionClosesIsClosed: a Streamable HTTP
// client deletes its connection while its session/new or session/load
// waits for an MCP server. The connection's end closes the sessions it
// has, then cancels the request, and the session the request then
// finishes must not outlive the connection: a new one is not created, a
// loaded one is closed and can be loaded again, its MCP server is gone,
// and the daemon holds no session open.
func TestASessionOpenedAsItsConnectionClosesIsClosed(t *testing.T) {
	for _, method := range []string{"session/new", "session/load"} {
		t.Run(method, func(t *testing.T) {
			ctx := testkit.Context(t)
			p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--mcp-start-timeout", "1h")
			base := strings.TrimSuffix(u, "/acp")
			cwd := t.TempDir()
			params := newParams(cwd)
			sid := ""
			if method == "session/load" {
				c := remoteWire(t, wsURL(u), nil)
				sid = c.openSession(ctx, cwd)
				c.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
				c.closer.Close()
				params["sessionId"] = sid
			}
			server, started := slowMCP(t, cwd)
			params["mcpServers"] = []any{server}
			c := remoteWire(t, u, nil)
			c.initialize(ctx, nil)
			if _, err := c.start(method, params); err != nil {
				t.Fatal(err)
			}
			awaitFIFO(t, started, "the MCP server's start")
			c.closer.Close()
			// The daemon forgets the connection once its shutdown has
			// ended: its sessions are closed by then.
			m := scrape(t, base)
			for m["dshd_acp_connections"] != 0 {
				if ctx.Err() != nil {
					t.Fatalf("the deleted connection was not ended; stderr:\n%s", p.stderr)
				}
				m = scrape(t, base)
			}
			if open := m["dshd_sessions_open"]; open != 0 {
				t.Fatalf("after the connection ended the daemon holds %v sessions open; stderr:\n%s", open, p.stderr)
			}
			// Its MCP server went with it. (A pid the server tells is its
			// sandbox's own: the daemon's processes say.)
			if runtime.GOOS == "linux" {
				if below := testkit.Descendants(t, p.cmd.Process.Pid); len(below) != 0 {
					t.Fatalf("after the connection ended the daemon still has processes %v", below)
				}
			}
			c2 := remoteWire(t, wsURL(u), nil)
			c2.initialize(ctx, nil)
			var list struct {
				Sessions []struct {
					SessionID string `json:"sessionId"`
				} `json:"sessions"`
			}
			c2.call(ctx, "session/list", map[string]any{}, &list)
			if method == "session/new" {
				// Nobody was told of it: it was not created.
				if len(list.Sessions) != 0 {
					t.Fatalf("the session/new its client never saw answered left sessions %+v", list.Sessions)
				}
				return
			}
			if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
				t.Fatalf("sessions %+v, want the loaded one %s", list.Sessions, sid)
			}
			// Closed, it loads again, on another connection.
			c2.call(ctx, "session/load", loadParams(sid, cwd), nil)
			c2.endTurn(ctx, sid, "hello again")
			p.stop(t)
		})
	}
}
