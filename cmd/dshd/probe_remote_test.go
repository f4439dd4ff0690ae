//go:build linux

// A hostile peer of the http(s) listener, beyond the limits that
// remote_limits_test.go covers: messages the transport keeps state for
// that the agent never answers in kind, and an SSE stream whose reader
// takes nothing after its connection was ended for it — each through a
// real daemon on real sockets.

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// A request whose id is not a string or an integer is answered -32600
// with a null id: the transport must not keep the id for an answer that
// never names it. The unbounded transport kept every such id for the
// connection's life, a 2 MiB id costing 2 MiB until the client left.
func TestProbe_RequestsWithIdsTheAgentCannotEchoCostNothingAfterTheirAnswers(t *testing.T) {
	p, u := serveTokenHTTP(t)
	ctx := testkit.Context(t)
	c := remoteWire(t, u, &remote.DialOptions{Token: daemonToken})
	c.initialize(ctx, nil)
	pad := strings.Repeat("x", 2*mb)
	const n = 256 // 512 MiB of ids in all
	for i := range n {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":{"pad":"%s%d"},"method":"session/list","params":{}}`, pad, i)
		if err := c.writeLine([]byte(line)); err != nil {
			t.Fatal(err)
		}
		c.waitUnmatched(ctx, -32600)
	}
	c.call(ctx, "session/list", map[string]any{}, nil) // the connection serves on
	checkPeakRSS(t, vmHWM(t, p), 96, "after 512 MiB of ids nobody can answer")
}
