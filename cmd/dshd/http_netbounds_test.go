//go:build linux

// End-to-end tests of the bounds of the http(s) listener that net/http
// owns and dshd makes settings of: the size of a request head
// (--max-header-bytes). Before it was a setting, net/http applied its
// own (1 MiB) and answered a head over it itself, without a word in
// dshd's log. Linux only, as the helpers
// shared with the other listener tests are.

package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// headOf is a GET /healthz head of about size bytes in all, with one
// header holding the filler.
func headOf(host string, size int) string {
	head := fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Filler: \r\n\r\n", host)
	return strings.Replace(head, "X-Filler: ", "X-Filler: "+strings.Repeat("a", max(0, size-len(head))), 1)
}

// statusOfRawHead sends head on a new TCP connection and returns the
// status of the answer.
func statusOfRawHead(t *testing.T, host, head string) int {
	t.Helper()
	nc := dialTCP(t, host)
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("no answer to a head of %d bytes: %v", len(head), err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// h2cClient is an HTTP client that speaks HTTP/2 with prior knowledge.
func h2cClient(t *testing.T) *http.Client {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	cl := &http.Client{Transport: &http.Transport{Protocols: &protos}}
	t.Cleanup(cl.CloseIdleConnections)
	return cl
}

// getWithFiller sends GET /healthz with cl and a header of n bytes and
// returns the answer's status and protocol.
func getWithFiller(t *testing.T, cl *http.Client, base string, n int) (int, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(guardOf(t), http.MethodGet, base+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Filler", strings.Repeat("b", n))
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.ProtoMajor
}

// A request head over --max-header-bytes is answered 431, on HTTP/1, on
// h2c and on HTTP/2 over TLS, and the first of an episode is logged with
// the setting, its value and the peer; a head that fits ends the episode.
// /metrics counts every refusal. Before, net/http answered a head over its
// own fixed 1 MiB with a 431 dshd never saw.
func TestHTTP_ARequestHeadOverTheLimitIsAnswered431AndLoggedOncePerEpisode(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--max-header-bytes", "8192")
	host, base := hostOf(u), strings.TrimSuffix(u, "/acp")
	words := []string{"setting=--max-header-bytes", "limit=8192"}

	if got := statusOfRawHead(t, host, headOf(host, 8000)); got != http.StatusOK {
		t.Fatalf("a head of 8000 bytes under a limit of 8192: %d, want 200", got)
	}
	nc := dialTCP(t, host)
	if _, err := io.WriteString(nc, headOf(host, 9000)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(string(body), "--max-header-bytes") {
		t.Fatalf("a head of 9000 bytes: %d %q, want 431 naming the setting", resp.StatusCode, body)
	}
	if _, err := p.stderr.waitFor(guardOf(t), append(words, "peer="+nc.LocalAddr().String())...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	if got, proto := getWithFiller(t, h2cClient(t), base, 20000); got != http.StatusRequestHeaderFieldsTooLarge || proto != 2 {
		t.Fatalf("an h2c request with 20000 bytes of headers: %d on HTTP/%d, want 431 on HTTP/2", got, proto)
	}
	if got := statusOfRawHead(t, host, headOf(host, 100)); got != http.StatusOK {
		t.Fatalf("a small head: %d", got)
	}
	if got := statusOfRawHead(t, host, headOf(host, 8500)); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a head of 8500 bytes after the episode ended: %d, want 431", got)
	}
	if err := waitCount(guardOf(t), p.stderr, 2, words...); err != nil {
		t.Fatalf("a refusal after a head that fitted: %v; stderr:\n%s", err, p.stderr)
	}
	if m := scrape(t, base); m[`dshd_limits_hit_total{limit="header-bytes"}`] != 3 {
		t.Errorf("/metrics counts %v heads over the limit, want 3", m[`dshd_limits_hit_total{limit="header-bytes"}`])
	}
	p.stop(t)
	if got := linesWith(p.stderr, words...); len(got) != 2 {
		t.Errorf("%d lines name the head limit, want 2 (the first of each episode):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// Over TLS, where no code of dshd's sees the bytes of a head, the limit
// holds too, on HTTP/2 and HTTP/1.1.
func TestHTTPS_ARequestHeadOverTheLimitIsAnswered431AndLogged(t *testing.T) {
	cert, key, pool := selfSigned(t)
	p, u := serveHTTP(t, nil, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--max-header-bytes", "8192")
	base := strings.TrimSuffix(u, "/acp")
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		cl := &http.Client{Transport: tr}
		got, proto := getWithFiller(t, cl, base, 9000)
		cl.CloseIdleConnections()
		if want := map[bool]int{true: 2, false: 1}[h2]; got != http.StatusRequestHeaderFieldsTooLarge || proto != want {
			t.Errorf("9000 bytes of headers: %d on HTTP/%d, want 431 on HTTP/%d", got, proto, want)
		}
	}
	if _, err := p.stderr.waitFor(guardOf(t), "setting=--max-header-bytes", "limit=8192"); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
}
