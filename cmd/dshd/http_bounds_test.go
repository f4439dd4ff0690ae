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
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
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

// A client that made one request on a keep-alive connection and then
// idles is closed at --keepalive-timeout (the old fixed value was 2 min,
// beyond the test's watchdog).
func TestHTTP_AnIdleKeepAliveConnectionIsClosedAtTheKeepaliveTimeout(t *testing.T) {
	_, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--keepalive-timeout", "300ms")
	host := hostOf(u)
	nc := dialTCP(t, host)
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
	if rest := closedBefore(t, &bufferedConn{Conn: nc, r: br}, 30*time.Second); rest != "" {
		t.Errorf("the daemon sent %q on the idle connection, want nothing", rest)
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
	})
}
