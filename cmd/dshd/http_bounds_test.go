//go:build linux

// End-to-end tests of the http(s) listener's own bounds: how long a
// request's headers may take (--header-timeout) and how long a keep-alive
// connection may idle between two requests (--keepalive-timeout). Before
// they were settings, both were fixed at 10 s and 2 min. Linux only, as
// the helpers it shares with the other listener tests are.

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// closedBefore reads nc to its end and fails the test unless the daemon
// closes it before d. d is not a timing target: it is a bound by
// construction, well above the setting the test gives and below the old
// fixed value, so only the setting can have closed the connection.
func closedBefore(t *testing.T, nc net.Conn, d time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(guardOf(t), d)
	defer cancel()
	return readsEOFBefore(ctx, t, nc, fmt.Sprintf("the daemon did not close the connection within %v", d))
}

// A client that sends part of a request line and then nothing is closed
// at --header-timeout. A daemon without a token has no handshake deadline,
// so nothing else closes it; the old fixed 10 s would not within 5 s.
func TestHTTP_AClientThatNeverFinishesItsHeadersIsClosedAtTheHeaderTimeout(t *testing.T) {
	_, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--header-timeout", "300ms")
	nc := dialTCP(t, hostOf(u))
	if _, err := io.WriteString(nc, "GET /healthz HT"); err != nil {
		t.Fatal(err)
	}
	// net/http may say why in a 4xx before it closes; it must not serve
	// the request it never finished reading.
	if got := closedBefore(t, nc, 5*time.Second); got != "" && !strings.HasPrefix(got, "HTTP/1.1 4") {
		t.Errorf("the daemon answered %q before closing, want nothing or a 4xx", got)
	}
}

// headerTimeoutWords are what the log line of a header-timeout hit holds
// besides its peer: the setting and its value.
var headerTimeoutWords = []string{"--header-timeout", "300ms"}

// cutAtTheHeaderTimeout opens a connection that sends head (maybe
// nothing) and waits until the daemon closes it; it returns the address
// the daemon sees it from.
func cutAtTheHeaderTimeout(t *testing.T, host, head string) string {
	t.Helper()
	nc := dialTCP(t, host)
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	closedBefore(t, nc, 5*time.Second)
	return nc.LocalAddr().String()
}

// The first connection cut by --header-timeout is logged with the setting,
// its value and the peer; the next ones are not, be it a part of a request
// line or nothing at all, until a request head arrives in time again (as
// the listener's other refusals are logged: once per episode).
func TestHTTP_TheHeaderTimeoutIsLoggedOnceWithThePeerUntilARequestArrivesInTime(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--header-timeout", "300ms")
	host := hostOf(u)
	first := cutAtTheHeaderTimeout(t, host, "GET /healthz HT")
	if _, err := p.stderr.waitFor(guardOf(t), append(headerTimeoutWords, "peer="+first)...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	cutAtTheHeaderTimeout(t, host, "")
	cutAtTheHeaderTimeout(t, host, "POST /acp HTTP/1.1\r\nHost: x\r\n")
	if resp := request(t, http.MethodGet, strings.TrimSuffix(u, "/acp")+"/healthz", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", resp.StatusCode)
	}
	again := cutAtTheHeaderTimeout(t, host, "GET")
	if _, err := p.stderr.waitFor(guardOf(t), append(headerTimeoutWords, "peer="+again)...); err != nil {
		t.Fatalf("a cut after a request that arrived in time: %v; stderr:\n%s", err, p.stderr)
	}
	// /metrics counts every cut, logged or not.
	if m := scrape(t, strings.TrimSuffix(u, "/acp")); m[`dshd_limits_hit_total{limit="header-timeout"}`] != 4 {
		t.Errorf("/metrics counts %v header-timeout cuts, want 4", m[`dshd_limits_hit_total{limit="header-timeout"}`])
	}
	// Every line about a connection was written before the daemon closed
	// it, so after the daemon's exit the count is final.
	p.stop(t)
	if got := linesWith(p.stderr, headerTimeoutWords...); len(got) != 2 {
		t.Errorf("%d lines name the header timeout, want 2 (the first of each episode):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// The TLS handshake of an https listener is bounded by --header-timeout
// too (net/http's rule when no other read timeout is set), and a peer it
// cuts is logged as any other.
func TestHTTPS_AClientThatNeverFinishesItsTLSHandshakeIsClosedAtTheHeaderTimeoutAndLogged(t *testing.T) {
	cert, key, _ := selfSigned(t)
	p, u := serveHTTP(t, nil, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--header-timeout", "300ms")
	peer := cutAtTheHeaderTimeout(t, strings.TrimPrefix(hostOf(u), "https://"), "\x16\x03\x01")
	if _, err := p.stderr.waitFor(guardOf(t), append(headerTimeoutWords, "peer="+peer)...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
}

// getKeptAlive makes one GET /healthz on nc and checks that the daemon
// keeps the connection open after it; it returns the connection to read
// on.
func getKeptAlive(t *testing.T, nc net.Conn, host string) net.Conn {
	t.Helper()
	fmt.Fprintf(nc, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %d %q (close %v), %v; want 200 on a kept-alive connection", resp.StatusCode, body, resp.Close, err)
	}
	return &bufferedConn{Conn: nc, r: br}
}

// A client that made one request on a keep-alive connection and then
// idles is closed at --keepalive-timeout (the old fixed value was 2 min,
// beyond the test's watchdog).
//
// That close is not logged: it is the normal end of a keep-alive
// connection, which HTTP lets either side close when idle and every
// client expects (it opens a new one for its next request, and the ACP
// connection goes on there). The peer sent a whole request and was
// answered; a line saying a bound was hit would tell the operator of a
// problem where there is none. So neither bound is named in the log, which
// also shows that the idle close is not taken for a header timeout.
func TestHTTP_AnIdleKeepAliveConnectionIsClosedAtTheKeepaliveTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--keepalive-timeout", "300ms")
	host := hostOf(u)
	nc := getKeptAlive(t, dialTCP(t, host), host)
	if rest := closedBefore(t, nc, 30*time.Second); rest != "" {
		t.Errorf("the daemon sent %q on the idle connection, want nothing", rest)
	}
	p.stop(t)
	for _, setting := range []string{"--header-timeout", "--keepalive-timeout"} {
		if got := linesWith(p.stderr, setting); len(got) != 0 {
			t.Errorf("an idle keep-alive close was logged:\n%s", strings.Join(got, "\n"))
		}
	}
}

// A keep-alive connection whose next request starts and does not finish
// is closed at --header-timeout, not at the far longer
// --keepalive-timeout, and logged as a header timeout.
func TestHTTP_AKeptAliveConnectionThatDoesNotFinishItsNextRequestIsCutAtTheHeaderTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--header-timeout", "300ms", "--keepalive-timeout", "10m")
	host := hostOf(u)
	raw := dialTCP(t, host)
	nc := getKeptAlive(t, raw, host)
	if _, err := io.WriteString(nc, "GET /healthz HT"); err != nil {
		t.Fatal(err)
	}
	closedBefore(t, nc, 5*time.Second)
	if _, err := p.stderr.waitFor(guardOf(t), append(headerTimeoutWords, "peer="+raw.LocalAddr().String())...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
}

// bufferedConn reads through r, which may hold bytes already read off
// the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestABadHTTPBoundStopsDshdAtStart(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "a zero header timeout", args: []string{"--header-timeout", "0"}, want: []string{"--header-timeout", `"0"`}},
		{name: "a header timeout that is no duration", args: []string{"--header-timeout", "abc"}, want: []string{"--header-timeout", `"abc"`, "want a duration"}},
		{name: "a negative header timeout from the environment", env: []string{"DSHD_HEADER_TIMEOUT=-1s"}, want: []string{"DSHD_HEADER_TIMEOUT", `"-1s"`}},
		{name: "a zero header timeout in the file", file: `{"headerTimeout": 0}`, want: []string{"FILE:1:", "headerTimeout"}},
		{name: "a zero keep-alive timeout", args: []string{"--keepalive-timeout", "0"}, want: []string{"--keepalive-timeout", `"0"`}},
		{name: "a keep-alive timeout that is no duration", args: []string{"--keepalive-timeout", "2 minutes"}, want: []string{"--keepalive-timeout", `"2 minutes"`, "want a duration"}},
		{name: "a keep-alive timeout from the environment that is no duration", env: []string{"DSHD_KEEPALIVE_TIMEOUT=soon"}, want: []string{"DSHD_KEEPALIVE_TIMEOUT", `"soon"`}},
		{name: "a negative keep-alive timeout in the file", file: `{"keepaliveTimeout": "-5s"}`, want: []string{"FILE:1:", "keepaliveTimeout", "-5s"}},
		{name: "a header limit below a usable head", args: []string{"--max-header-bytes", "100"}, want: []string{"--max-header-bytes", `"100"`, "want 4096 to"}},
		{name: "a header limit that is no number", env: []string{"DSHD_MAX_HEADER_BYTES=1MiB"}, want: []string{"DSHD_MAX_HEADER_BYTES", `"1MiB"`, "want a whole number"}},
		{name: "a header limit too large in the file", file: `{"maxHeaderBytes": 4294967296}`, want: []string{"FILE:1:", "maxHeaderBytes"}},
		{name: "no HTTP/2 streams", args: []string{"--http2-max-streams", "0"}, want: []string{"--http2-max-streams", `"0"`, "want 1 to"}},
		{name: "HTTP/2 streams from the environment that are no number", env: []string{"DSHD_HTTP2_MAX_STREAMS=many"}, want: []string{"DSHD_HTTP2_MAX_STREAMS", `"many"`}},
		{name: "negative HTTP/2 streams in the file", file: `{"http2MaxStreams": -1}`, want: []string{"FILE:1:", "http2MaxStreams"}},
	})
}

// A token daemon closes a TCP connection that presents no valid bearer
// token within --handshake-timeout; the first of an episode is logged with
// the setting and the peer, and the next are not (a silent peer, a
// started request, a probe kept alive without a token), until a
// connection authenticates. Before, every such connection was a line: a
// peer opening connections without end wrote the log without end.
func TestHTTP_TheHandshakeTimeoutIsLoggedOnceUntilAConnectionAuthenticates(t *testing.T) {
	p, u := serveTokenHTTP(t, "--handshake-timeout", "300ms")
	host := hostOf(u)
	ctx := guardOf(t)
	words := []string{"presented no valid bearer token in time", "--handshake-timeout", "300ms"}
	cut := func(head string) string {
		nc := dialTCP(t, host)
		if _, err := io.WriteString(nc, head); err != nil {
			t.Fatal(err)
		}
		closedBefore(t, nc, 5*time.Second)
		return nc.LocalAddr().String()
	}
	first := cut("")
	if _, err := p.stderr.waitFor(ctx, append(words, "peer="+first)...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	cut("GET /healthz HT")
	probe := getKeptAlive(t, dialTCP(t, host), host)
	closedBefore(t, probe, 5*time.Second)
	remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken}).initialize(testkit.Context(t), nil)
	again := cut("")
	if _, err := p.stderr.waitFor(ctx, append(words, "peer="+again)...); err != nil {
		t.Fatalf("a cut after a connection authenticated: %v; stderr:\n%s", err, p.stderr)
	}
	p.stop(t)
	if got := linesWith(p.stderr, words...); len(got) != 2 {
		t.Errorf("%d lines name the handshake timeout, want 2 (the first of each episode):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// A TLS client that negotiates HTTP/2 and then sends nothing is closed at
// --header-timeout too, and logged as any other cut: the HTTP/2 preface
// is its first request's head. Before, net/http waited its own fixed
// 10 s for it, beyond any setting, and said nothing.
func TestHTTPS_AnHTTP2ClientThatNeverSendsItsPrefaceIsClosedAtTheHeaderTimeoutAndLogged(t *testing.T) {
	cert, key, pool := selfSigned(t)
	p, u := serveHTTP(t, nil, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--header-timeout", "300ms")
	tc, err := tls.Dial("tcp", strings.TrimPrefix(hostOf(u), "https://"), &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	if proto := tc.ConnectionState().NegotiatedProtocol; proto != "h2" {
		t.Fatalf("negotiated %q, want h2", proto)
	}
	closedBefore(t, tc, 5*time.Second)
	if _, err := p.stderr.waitFor(guardOf(t), append(headerTimeoutWords, "peer="+tc.LocalAddr().String())...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
}

// Once its preface is in, an HTTP/2 connection over TLS lives past
// --header-timeout: here an SSE stream on it carries two keepalive
// comments a second apart, with a header timeout of 300 ms.
func TestHTTPS_AnHTTP2ConnectionLivesPastTheHeaderTimeoutOnceItsPrefaceIsIn(t *testing.T) {
	cert, key, pool := selfSigned(t)
	_, u := serveHTTP(t, nil, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--header-timeout", "300ms", "--keepalive-seconds", "1")
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	defer cl.CloseIdleConnections()
	ctx := guardOf(t)
	post, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	post.Header.Set("Content-Type", "application/json")
	resp, err := cl.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	conn := resp.Header.Get(remote.HeaderConnectionID)
	if resp.ProtoMajor != 2 || conn == "" {
		t.Fatalf("initialize: HTTP/%d, connection %q", resp.ProtoMajor, conn)
	}
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(remote.HeaderConnectionID, conn)
	stream, err := cl.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	br := bufio.NewReader(stream.Body)
	for comments := 0; comments < 2; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d keepalive comments: %v", comments, err)
		}
		if line == ":\n" {
			comments++
		}
	}
}
