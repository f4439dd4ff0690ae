//go:build linux

// A peer that opens sessions without end on one connection: each live
// session holds its agent, journal and tools in the daemon's memory
// (about 4 KB each when idle, measured with 5000 over a WebSocket), so
// their number per connection is a limit of its own.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestProbe_SessionsOverTheConnectionsLimitAreRefusedUntilOneCloses(t *testing.T) {
	p, path := serveUnix(t, "--max-sessions-per-connection", "3")
	ctx := testkit.Context(t)
	c := dialClosing(t, "unix", path)
	c.initialize(ctx, nil)
	cwd := t.TempDir()
	var sids []string
	for range 3 {
		sids = append(sids, c.newSession(ctx, cwd))
	}
	for range 2 {
		e := c.callFail(ctx, "session/new", newParams(cwd))
		if e.Code != -32600 || !strings.Contains(string(e.Data), "--max-sessions-per-connection") {
			t.Fatalf("a fourth session: %+v, want -32600 naming the limit", e)
		}
	}
	// Another connection is not held back by this one.
	other := dialClosing(t, "unix", path)
	other.initialize(ctx, nil)
	other.newSession(ctx, cwd)
	// Closing one makes room.
	c.call(ctx, "session/close", map[string]any{"sessionId": sids[0]}, nil)
	c.newSession(ctx, cwd)
	if _, err := p.stderr.waitFor(ctx, "WRN", "sessions", "setting=--max-sessions-per-connection", "limit=3", "peer="); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "limit=3"); n != 1 {
		t.Errorf("the limit was logged %d times, want once\n%s", n, p.stderr)
	}
}
