//go:build linux

// The hardening limits (issue 10) on the http(s) listener (issue 14): the
// same settings bound a WebSocket or Streamable HTTP connection as a
// socket's — a peer that never reads, a message over the line limit, too
// many connections, no token in time, guessing the token — each hit
// logged once with the peer, through a real daemon.

package main

import (
	"bufio"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// serveTokenHTTP starts an http listener that requires daemonToken.
func serveTokenHTTP(t testing.TB, extra ...string) (*proc, string) {
	t.Helper()
	return serveHTTP(t, []string{"DSHD_TOKEN=" + daemonToken}, "http://127.0.0.1:0", extra...)
}

// hostOf returns the HOST:PORT of an /acp URL.
func hostOf(u string) string {
	return strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/acp")
}

// dialWS opens a WebSocket to u with token as the bearer token; the test
// owns its reads.
func dialWS(t testing.TB, u, token string) *websocket.Conn {
	t.Helper()
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	ws, _, err := websocket.Dial(testkit.Context(t), wsURL(u), &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// rawHTTP sends one request head on a new TCP connection to host and
// returns everything the daemon sends until it closes the connection.
func rawHTTP(t testing.TB, host, head string) string {
	t.Helper()
	nc := dialTCP(t, host)
	if _, err := io.WriteString(nc, head); err != nil {
		return ""
	}
	return readsEOF(t, nc)
}

func TestRemote_AWebSocketPeerThatNeverReadsCostsBoundedMemoryAndIsClosedAfterTheWriteTimeout(t *testing.T) {
	p, u := serveTokenHTTP(t, "--write-timeout", "1s")
	ctx := testkit.Context(t)
	ws := dialWS(t, u, daemonToken)
	done := make(chan error, 1)
	go func() {
		// One request a frame, never reading an answer, until the daemon
		// gives up on the socket (or 48 MB went out: the unbounded
		// transport would have taken them all).
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"x/unknown"}`)
		for sent := 0; sent < 48*mb; sent += len(msg) {
			if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()

	// While the flood runs, another WebSocket client is served.
	c := remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken})
	sid := c.openSession(ctx, t.TempDir())
	if got := c.prompt(ctx, sid, "still served?"); got != "end_turn" {
		t.Fatalf("the second client's prompt ended %q", got)
	}

	select {
	case err := <-done:
		if err == nil {
			t.Error("the daemon read 48 MB of requests nobody collected the answers to")
		}
	case <-ctx.Done():
		t.Fatal("the flood never ended")
	}
	if _, err := p.stderr.waitFor(ctx, "has not read for the write timeout", "setting=--write-timeout", "peer=\"tcp 127.0.0.1:"); err != nil {
		t.Errorf("the stalled WebSocket was not closed: %v\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "has not read for the write timeout"); n != 1 {
		t.Errorf("the stall was logged %d times, want once\n%s", n, p.stderr)
	}
	checkPeakRSS(t, vmHWM(t, p), 96, "under the flood")
}

func TestRemote_AMessageOverTheLineLimitIsRefusedAndTheConnectionServesOn(t *testing.T) {
	p, u := serveTokenHTTP(t, "--max-line-bytes", "4096", "--preauth-max-line-bytes", "1024")
	ctx := testkit.Context(t)
	big := `{"jsonrpc":"2.0","id":77,"method":"session/list","params":{"pad":"` + strings.Repeat("x", 8<<10) + `"}}`

	t.Run("a WebSocket frame", func(t *testing.T) {
		c := remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken})
		c.initialize(ctx, nil)
		if err := c.writeLine([]byte(big)); err != nil {
			t.Fatal(err)
		}
		c.waitUnmatched(ctx, -32600)
		c.call(ctx, "session/list", map[string]any{}, nil) // the connection serves on
		if _, err := p.stderr.waitFor(ctx, "input line too long", "setting=--max-line-bytes", "peer=\"tcp 127.0.0.1:"); err != nil {
			t.Errorf("%v\n%s", err, p.stderr)
		}
	})

	t.Run("a POST body", func(t *testing.T) {
		auth := map[string]string{"Authorization": "Bearer " + daemonToken}
		id := postInitialize(t, u, auth)
		hdr := map[string]string{"Authorization": "Bearer " + daemonToken, remote.HeaderConnectionID: id}
		for range 2 {
			if r := postJSON(t, u, big, hdr); r.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("a POST over --max-line-bytes: %d, want 413", r.StatusCode)
			}
		}
		if r := postJSON(t, u, `{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}`, hdr); r.StatusCode != http.StatusAccepted {
			t.Fatalf("the next POST: %d, want 202", r.StatusCode)
		}
		padded := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"` + strings.Repeat("x", 2048) + `"}}`
		if r := postJSON(t, u, padded, auth); r.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("an initialize over --preauth-max-line-bytes: %d, want 413", r.StatusCode)
		}
		if _, err := p.stderr.waitFor(ctx, "larger than the message limit", "setting=--max-line-bytes", "limit=4096", "peer=127.0.0.1:"); err != nil {
			t.Errorf("%v\n%s", err, p.stderr)
		}
		if _, err := p.stderr.waitFor(ctx, "larger than the message limit", "setting=--preauth-max-line-bytes", "limit=1024", "peer=127.0.0.1:"); err != nil {
			t.Errorf("%v\n%s", err, p.stderr)
		}
		if n := len(linesWith(p.stderr, "larger than the message limit", "limit=4096")); n != 1 {
			t.Errorf("two POSTs over the limit on one connection were logged %d times, want once\n%s", n, p.stderr)
		}
	})
}

// postJSON POSTs the JSON body to u with the headers.
func postJSON(t testing.TB, u, body string, hdr map[string]string) *http.Response {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	maps.Copy(h, hdr)
	return request(t, http.MethodPost, u, body, h)
}

// request sends one request to u with body and the headers, a "Host"
// among them as the request's Host (which Go takes from nowhere else),
// and returns the answer, its body read.
func request(t testing.TB, method, u, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(testkit.Context(t), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// postInitialize opens a Streamable HTTP connection and returns its id.
func postInitialize(t testing.TB, u string, hdr map[string]string) string {
	t.Helper()
	r := postJSON(t, u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, hdr)
	id := r.Header.Get(remote.HeaderConnectionID)
	if r.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, connection %q", r.StatusCode, id)
	}
	return id
}

func TestRemote_ConnectionsOverTheLimitAreRefused(t *testing.T) {
	p, u := serveTokenHTTP(t, "--max-connections", "3")
	ctx := testkit.Context(t)
	base := "http://" + hostOf(u)
	first := remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken})
	first.initialize(ctx, nil)
	dialWS(t, u, daemonToken)
	// The third connection is a keep-alive one that scrapes /metrics.
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer cl.CloseIdleConnections()
	metrics := func() string {
		resp, err := cl.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	metrics()

	got := rawHTTP(t, hostOf(u), "GET /healthz HTTP/1.1\r\nHost: dshd\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "too many connections") {
		t.Fatalf("a fourth connection got %q, want a 503 saying why", got)
	}
	if _, err := p.stderr.waitFor(ctx, "the connection limit is reached", "setting=--max-connections", "limit=3", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if m := metrics(); !strings.Contains(m, `dshd_limits_hit_total{limit="connections"} 1`) {
		t.Errorf("the refusal is not in /metrics:\n%s", m)
	}
	if got := first.prompt(ctx, first.newSession(ctx, t.TempDir()), "hi"); got != "end_turn" {
		t.Errorf("the first connection's prompt ended %q", got)
	}
}

func TestRemote_ConnectionsOverTheUnauthenticatedLimitAreRefusedUntilOneAuthenticates(t *testing.T) {
	p, u := serveTokenHTTP(t, "--max-unauthenticated", "2")
	ctx := testkit.Context(t)
	// authenticate sends a request with the right token on nc and reads
	// its answer: by then the daemon counts nc as authenticated.
	authenticate := func(nc net.Conn) {
		t.Helper()
		if _, err := io.WriteString(nc, "GET /acp HTTP/1.1\r\nHost: dshd\r\nAuthorization: Bearer "+daemonToken+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil || resp.StatusCode != http.StatusBadRequest { // no Acp-Connection-Id: past the token
			t.Fatalf("the authenticating request: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	authed := dialTCP(t, hostOf(u))
	authenticate(authed)
	idle := dialTCP(t, hostOf(u))
	dialTCP(t, hostOf(u)) // two unauthenticated now
	if got := rawHTTP(t, hostOf(u), "GET /healthz HTTP/1.1\r\nHost: dshd\r\n\r\n"); !strings.Contains(got, "503") || !strings.Contains(got, "waiting to authenticate") {
		t.Fatalf("a third unauthenticated connection got %q, want a refusal", got)
	}
	if _, err := p.stderr.waitFor(ctx, "limit of unauthenticated connections", "setting=--max-unauthenticated", "limit=2", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	// Once one of them authenticates, there is room again.
	authenticate(idle)
	turn(t, remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken}))
}

func TestRemote_ConnectionsWithoutAValidTokenAreClosedAtTheHandshakeDeadline(t *testing.T) {
	p, u := serveTokenHTTP(t, "--handshake-timeout", "1s")
	ctx := testkit.Context(t)
	authed := remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken})
	authed.initialize(ctx, nil)

	silent := dialTCP(t, hostOf(u))
	refused := dialTCP(t, hostOf(u))
	if _, err := io.WriteString(refused, "GET /acp HTTP/1.1\r\nHost: dshd\r\nAuthorization: Bearer wrong-token-0123456789\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	readsEOF(t, silent)
	if got := readsEOF(t, refused); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("the wrong token got %q before the close, want its 403", got)
	}
	// Both closes are one episode, logged once (http_bounds_test.go).
	if err := waitCount(ctx, p.stderr, 1, "presented no valid bearer token in time", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	// The connection that authenticated is not subject to the deadline.
	if got := authed.prompt(ctx, authed.newSession(ctx, t.TempDir()), "hi"); got != "end_turn" {
		t.Errorf("the authenticated connection's prompt ended %q", got)
	}
}

func TestRemote_WrongBearerTokensEndTheConnectionAndBrakeTheSource(t *testing.T) {
	p, u := serveTokenHTTP(t, "--auth-penalty", "10m")
	ctx := testkit.Context(t)
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	get := func(token string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i := range 3 {
		r := get("guess-0123456789-" + string(rune('a'+i)))
		if r.StatusCode != http.StatusForbidden {
			t.Fatalf("guess %d: %d, want 403", i, r.StatusCode)
		}
		if last := i == 2; r.Close != last {
			t.Fatalf("guess %d: Connection: close is %v, want %v", i, r.Close, last)
		}
	}
	// The source is refused now, even with the right token.
	if r := get(daemonToken); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the right token from a braked source: %d, want 503", r.StatusCode)
	}
	if got := rawHTTP(t, hostOf(u), "GET /healthz HTTP/1.1\r\nHost: dshd\r\n\r\n"); !strings.Contains(got, "too many failed authentications") {
		t.Fatalf("the source's next connection got %q, want a refusal", got)
	}
	if _, err := p.stderr.waitFor(ctx, "closing the connection after failed authentications", "setting=--max-auth-failures", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if _, err := p.stderr.waitFor(ctx, "refusing connections from a source that failed authentication", "setting=--auth-penalty", "peer=127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "refusing connections from a source"); n != 1 {
		t.Errorf("the penalty was logged %d times, want once\n%s", n, p.stderr)
	}
}

func TestRemote_AnIdleWebSocketIsClosedAfterTheIdleTimeout(t *testing.T) {
	p, u := serveTokenHTTP(t, "--idle-timeout", "1s")
	ctx := testkit.Context(t)
	c := remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken})
	c.initialize(ctx, nil)
	select {
	case <-c.done:
	case <-ctx.Done():
		t.Fatal("the idle WebSocket was kept")
	}
	if _, err := p.stderr.waitFor(ctx, "closing the idle connection", "setting=--idle-timeout", "peer=\"tcp 127.0.0.1:"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
}

func TestRemote_TheTokenComesFromTheTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(daemonToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--token-file", file)
	if _, err := remote.Dial(testkit.Context(t), wsURL(u), nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("no token: %v, want 401", err)
	}
	turn(t, remoteWire(t, wsURL(u), &remote.DialOptions{Token: daemonToken}))

	// A token file off loopback is what lets the listener start there.
	code, _, stderr := runDshd(t, nil, "serve", "--listen", "http://0.0.0.0:0", "--token-file", filepath.Join(t.TempDir(), "missing"))
	if code == 0 || !strings.Contains(stderr, "--token-file") {
		t.Fatalf("a missing token file: exit %d\n%s", code, stderr)
	}
}
