//go:build linux

// A flood of connections that never authenticate, each hitting a bound
// that applies before authentication, costs the log one line per episode
// (the next connection that authenticates ends one), not one per
// connection: the unauthenticated cap bounds how many such connections
// are open at once, not how many come. Linux only, as the helpers shared
// with the other listener tests are.

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// floodSize is how many connections each flood opens.
const floodSize = 500

// flooded opens floodSize connections to addr, a few dozen at a time, each
// sending head (maybe nothing), and waits until the daemon has closed them
// all.
func flooded(t *testing.T, addr, head string) {
	t.Helper()
	var wg sync.WaitGroup
	slots := make(chan struct{}, 50)
	for range floodSize {
		slots <- struct{}{}
		nc := dialTCP(t, addr)
		wg.Go(func() {
			defer func() { <-slots }()
			if _, err := io.WriteString(nc, head); err != nil {
				return // closed already: what the flood waits for
			}
			readsEOF(t, nc)
			nc.Close()
		})
	}
	wg.Wait()
}

// A token socket daemon closes every connection that sends a line over
// --preauth-max-line-bytes before it authenticates; of 500 such, one is
// logged, with the setting, until a connection authenticates, after which
// the next is logged again. Before, each connection was a line.
func TestAFloodOfOverLongLinesBeforeAuthenticationIsLoggedOncePerEpisode(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--preauth-max-line-bytes", "1024")
	words := []string{"a line over the limit before authentication", "setting=--preauth-max-line-bytes"}
	line := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}` + "\n"
	flooded(t, addr, line)
	ctx := guardOf(t)
	if _, err := p.stderr.waitFor(ctx, words...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	c := dialClosing(t, "tcp", addr)
	authenticate(ctx, c, daemonToken)
	flooded(t, addr, line)
	if err := waitCount(ctx, p.stderr, 2, words...); err != nil {
		t.Fatalf("a flood after a connection authenticated: %v; stderr:\n%s", err, p.stderr)
	}
	c.closer.Close()
	stoppedWithLines(t, p, 2, words...)
}

// Of 500 TCP connections to a token http(s) listener that present no
// bearer token before --handshake-timeout, one is logged per episode,
// which a connection that authenticates ends.
func TestHTTP_AFloodOfConnectionsWithoutATokenIsLoggedOncePerEpisode(t *testing.T) {
	p, u := serveTokenHTTP(t, "--handshake-timeout", "200ms", "--max-unauthenticated", "100")
	host := hostOf(u)
	words := []string{"presented no valid bearer token in time", "setting=--handshake-timeout"}
	flooded(t, host, "")
	ctx := guardOf(t)
	if _, err := p.stderr.waitFor(ctx, words...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken}).initialize(testkit.Context(t), nil)
	flooded(t, host, "GET /healthz HTTP/1.1\r\n")
	if err := waitCount(ctx, p.stderr, 2, words...); err != nil {
		t.Fatalf("a flood after a connection authenticated: %v; stderr:\n%s", err, p.stderr)
	}
	stoppedWithLines(t, p, 2, words...)
}

// On Streamable HTTP the handshake is the initialize POST: of 500 whose
// body does not arrive within --handshake-timeout, one is logged per
// episode, which an initialize that arrives in full ends. (A WebSocket
// or Streamable HTTP connection is authenticated by its bearer token
// before the agent reads from it, so the ACP connection's own handshake
// deadline never applies to it.)
func TestHTTP_AFloodOfInitializeBodiesThatNeverArriveIsLoggedOncePerEpisode(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--handshake-timeout", "200ms")
	host := hostOf(u)
	words := []string{"did not arrive in time", "initialize=true", "setting=--handshake-timeout"}
	head := fmt.Sprintf("POST /acp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", host)
	flooded(t, host, head)
	ctx := guardOf(t)
	if _, err := p.stderr.waitFor(ctx, words...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	postInitialize(t, u, nil)
	flooded(t, host, head)
	if err := waitCount(ctx, p.stderr, 2, words...); err != nil {
		t.Fatalf("a flood after an initialize: %v; stderr:\n%s", err, p.stderr)
	}
	stoppedWithLines(t, p, 2, words...)
}
