//go:build linux

// A hostile peer of the http(s) listener, beyond the limits that
// remote_limits_test.go covers: messages the transport keeps state for
// that the agent never answers in kind, and an SSE stream whose reader
// takes nothing after its connection was ended for it — each through a
// real daemon on real sockets.

package main

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"syscall"
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
	const n = 64 // 128 MiB of ids in all
	for i := range n {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":{"pad":"%s%d"},"method":"session/list","params":{}}`, pad, i)
		if err := c.writeLine([]byte(line)); err != nil {
			t.Fatal(err)
		}
		c.waitUnmatched(ctx, -32600)
	}
	c.call(ctx, "session/list", map[string]any{}, nil) // the connection serves on
	checkPeakRSS(t, vmHWM(t, p), 96, "after 128 MiB of ids nobody can answer")
}

// dialSmallWindow opens a TCP connection to host whose receive buffer is
// as small as the kernel allows, so that a peer that never reads stops
// the daemon's writes after a few KiB.
func dialSmallWindow(t testing.TB, host string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	nc, err := d.DialContext(testkit.Context(t), "tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// An SSE reader that takes nothing gets its connection ended after the
// write timeout, and its TCP connection with it: the daemon's write to it
// must not stay blocked, holding a goroutine, a descriptor and the
// stream's last batch for as long as the peer keeps the socket open.
// Before, the ACP connection ended but the stream's write waited for the
// peer for ever; once the peer read, the stream ended as a finished
// response and its TCP connection stayed open for the next request.
func TestProbe_AnSSEReaderThatTakesNothingLosesItsTCPConnectionAtTheWriteTimeout(t *testing.T) {
	p, u := serveTokenHTTP(t, "--write-timeout", "1s")
	ctx := testkit.Context(t)
	host := hostOf(u)
	auth := map[string]string{"Authorization": "Bearer " + daemonToken}
	conn := postInitialize(t, u, auth)
	hdr := map[string]string{"Authorization": "Bearer " + daemonToken, remote.HeaderConnectionID: conn}

	nc := dialSmallWindow(t, host)
	fmt.Fprintf(nc, "GET /acp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n%s: %s\r\n\r\n", host, daemonToken, remote.HeaderConnectionID, conn)

	// Each request is answered with its 256 KiB id on the connection
	// stream, which nobody reads: the daemon's queue fills, and the
	// connection is ended when it stays full for the write timeout.
	pad := strings.Repeat("y", 256<<10)
	for i := 0; ; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s%d","method":"x/unknown"}`, pad, i)
		if r := postJSON(t, u, body, hdr); r.StatusCode != http.StatusAccepted {
			break // the connection was ended (404)
		}
		if i > 400 {
			t.Fatal("the daemon took 100 MiB of answers for a reader that takes nothing")
		}
	}
	// Either the transport's queue or the agent's gives up first; both
	// say the timeout.
	if _, err := p.stderr.waitFor(ctx, "WRN", "timeout=1s"); err != nil {
		t.Fatalf("%v\n%s", err, p.stderr)
	}

	if _, err := p.stderr.waitFor(ctx, "ending an SSE stream: its reader took none of its output in time", "setting=--write-timeout", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}

	// Now read what the daemon sent: a stream cut off ends with the
	// connection; one left waiting ends as a complete chunked response,
	// with the TCP connection kept for another request.
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetReadDeadline(dl)
	}
	if completed := readResponseEnd(nc); completed {
		t.Error("the stream's write waited for the reader past the write timeout: the response was completed and the TCP connection kept")
	}
}

// readResponseEnd reads nc until the daemon closes it (false) or a
// chunked response ends on it (true).
func readResponseEnd(nc net.Conn) bool {
	end := []byte("\r\n0\r\n\r\n")
	var tail []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := nc.Read(buf)
		tail = append(tail, buf[:n]...)
		if bytes.HasSuffix(tail, end) {
			return true
		}
		if len(tail) > len(end) {
			tail = tail[len(tail)-len(end):]
		}
		if err != nil {
			return false
		}
	}
}

// requestAs sends one request to the listener at host with the Host (and
// Origin) header a browser on another site sends after DNS rebinding,
// and returns the status.
func requestAs(t testing.TB, host, asHost, method, body string, hdr map[string]string) int {
	t.Helper()
	h := map[string]string{"Host": asHost, "Origin": "http://" + asHost}
	maps.Copy(h, hdr)
	return request(t, method, "http://"+host+"/acp", body, h).StatusCode
}

// A listener without a token trusts whoever reaches loopback, so it must
// serve only requests addressed to loopback: a web page whose name the
// attacker points at 127.0.0.1 (DNS rebinding) is same-origin for the
// browser, and before it could open a connection, answer the permission
// questions itself and have the agent run commands as the daemon's user.
func TestProbe_AListenerWithoutATokenServesOnlyRequestsAddressedToLoopback(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0")
	ctx := testkit.Context(t)
	host := hostOf(u)
	_, port, _ := net.SplitHostPort(host)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	jsonHdr := map[string]string{"Content-Type": "application/json"}
	upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	for _, evil := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port} {
		if got := requestAs(t, host, evil, http.MethodPost, initialize, jsonHdr); got != http.StatusForbidden {
			t.Errorf("initialize for Host %s: %d, want 403", evil, got)
		}
		if got := requestAs(t, host, evil, http.MethodGet, "", upgrade); got != http.StatusForbidden {
			t.Errorf("a WebSocket for Host %s: %d, want 403", evil, got)
		}
	}
	for _, ok := range []string{host, "localhost:" + port, "[::1]:" + port, "dshd.localhost:" + port} {
		if got := requestAs(t, host, ok, http.MethodPost, initialize, jsonHdr); got != http.StatusOK {
			t.Errorf("initialize for Host %s: %d, want 200", ok, got)
		}
	}
	if _, err := p.stderr.waitFor(ctx, "WRN", "not addressed to loopback", "host=evil.example", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "not addressed to loopback"); n != 1 {
		t.Errorf("the refusals were logged %d times, want once\n%s", n, p.stderr)
	}
}

// The POST that opens a Streamable HTTP connection is bounded in time as
// the handshake is: a peer that sends its head and then trickles, or
// stops sending, its body is answered 408 and cut off at the handshake
// timeout, as a socket peer is that does not finish its first line.
// Before, nothing ended it: without a token, any local user could hold
// every one of --max-connections this way, for ever.
func TestProbe_AnInitializeBodyThatNeverEndsIsCutOffAtTheHandshakeTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--handshake-timeout", "1s")
	ctx := testkit.Context(t)
	host := hostOf(u)
	nc := dialTCP(t, host)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	fmt.Fprintf(nc, "POST /acp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body[:10])
	if got := readsEOF(t, nc); !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("the daemon answered %q, want a 408", got)
	}
	if _, err := p.stderr.waitFor(ctx, "WRN", "did not arrive in time", "setting=--handshake-timeout", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
}

// A POST to an open connection whose body never ends is cut off at the
// idle timeout, as a socket's unfinished line is (the connection has read
// no message for that long): 408, and the TCP connection closed. Before,
// it held its TCP connection, and the connection's one body slot, for as
// long as the peer kept it open, also after the ACP connection ended.
func TestProbe_APostBodyThatNeverEndsIsCutOffAtTheIdleTimeout(t *testing.T) {
	p, u := serveTokenHTTP(t, "--idle-timeout", "1s")
	ctx := testkit.Context(t)
	host := hostOf(u)
	conn := postInitialize(t, u, map[string]string{"Authorization": "Bearer " + daemonToken})
	nc := dialTCP(t, host)
	body := `{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`
	fmt.Fprintf(nc, "POST /acp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		host, daemonToken, remote.HeaderConnectionID, conn, len(body), body[:10])
	if got := readsEOF(t, nc); !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("the daemon answered %q, want a 408", got)
	}
	if _, err := p.stderr.waitFor(ctx, "WRN", "did not arrive in time", "setting=--idle-timeout", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
}
