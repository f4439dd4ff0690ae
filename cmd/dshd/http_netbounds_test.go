//go:build linux

// End-to-end tests of the bounds of the http(s) listener that net/http
// owns and dshd makes settings of: the size of a request head
// (--max-header-bytes) and the HTTP/2 streams of a connection
// (--http2-max-streams). Before they were settings, net/http applied
// its own (1 MiB, and 4096 fixed by dshd) and answered a head over its
// bound itself, without a word in dshd's log. Linux only, as the helpers
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

// hitsCounted checks that /metrics at base counts n hits of limit.
func hitsCounted(t *testing.T, base, limit string, n float64) {
	t.Helper()
	series := `dshd_limits_hit_total{limit="` + limit + `"}`
	if got := scrape(t, base)[series]; got != n {
		t.Errorf("/metrics: %s %v, want %v", series, got, n)
	}
}

// stoppedWithLines stops p and checks that its log has n lines holding
// every one of the words: the first of each episode. Every such line is
// written before the daemon answers or closes what it is about, so after
// the daemon's exit the count is final.
func stoppedWithLines(t *testing.T, p *proc, n int, words ...string) {
	t.Helper()
	p.stop(t)
	if got := linesWith(p.stderr, words...); len(got) != n {
		t.Errorf("%d lines hold %q, want %d:\n%s", len(got), words, n, strings.Join(got, "\n"))
	}
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
	hitsCounted(t, base, "header-bytes", 3)
	stoppedWithLines(t, p, 2, words...)
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

// blockedPost starts a POST /acp on cl whose body never ends until the
// returned function is called, which waits for the answer: its handler
// holds one HTTP/2 stream until then.
func blockedPost(t *testing.T, cl *http.Client, u string) (finish func()) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(guardOf(t), http.MethodPost, u, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := cl.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	return func() {
		t.Helper()
		pw.Close()
		if err := <-done; err != nil {
			t.Errorf("the held POST: %v", err)
		}
	}
}

// An HTTP/2 connection whose requests take every one of its
// --http2-max-streams is logged, with the setting and the peer, once
// until no connection has them all in use (half of them freed): the
// client's next requests wait, or go to another connection. /metrics
// counts each connection that reaches the limit. Before, the limit was
// fixed at 4096 and reaching it said nothing.
func TestHTTP_AnHTTP2ConnectionWithEveryStreamInUseIsLoggedOncePerEpisode(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--http2-max-streams", "4")
	base := strings.TrimSuffix(u, "/acp")
	cl := h2cClient(t)
	words := []string{"every stream", "setting=--http2-max-streams", "limit=4", "peer=127.0.0.1:"}
	// One request first, so that the four below share its connection.
	if got, proto := getWithFiller(t, cl, base, 0); got != http.StatusOK || proto != 2 {
		t.Fatalf("GET /healthz: %d on HTTP/%d", got, proto)
	}
	saturate := func(lines int) {
		t.Helper()
		var finish []func()
		for range 4 {
			finish = append(finish, blockedPost(t, cl, u))
		}
		if err := waitCount(guardOf(t), p.stderr, lines, words...); err != nil {
			t.Fatalf("%v; stderr:\n%s", err, p.stderr)
		}
		for _, f := range finish {
			f()
		}
	}
	saturate(1)
	saturate(2)
	hitsCounted(t, base, "http2-streams", 2)
	stoppedWithLines(t, p, 2, words...)
}

// h2Frame is one HTTP/2 frame: its type, flags, stream and payload.
func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags,
		byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}, payload...)
}

// hpackLiteral is a header field whose name is the static table's entry
// index (below 15), literal and not indexed (RFC 7541 §6.2.2).
func hpackLiteral(index byte, value string) []byte {
	return append([]byte{index, byte(len(value))}, value...)
}

// A client that opens more streams than --http2-max-streams, which the
// daemon told it, has the extra ones refused, and the first refusal of an
// episode is logged with the setting; /metrics counts each. net/http
// reports it only through HTTP2Config.CountError, under a name this test
// pins: a Go release that renames it fails here rather than going unseen.
func TestHTTP_HTTP2StreamsOverTheLimitAreRefusedAndLogged(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--http2-max-streams", "4")
	nc := dialTCP(t, hostOf(u))
	// POST /acp without END_STREAM: each handler waits for a body.
	block := []byte{0x83, 0x86} // :method POST, :scheme http
	block = append(block, hpackLiteral(4, "/acp")...)
	block = append(block, hpackLiteral(1, "127.0.0.1")...)
	block = append(block, append([]byte{0x0f, 0x10, 16}, "application/json"...)...) // content-type, static entry 31
	out := append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), h2Frame(0x4, 0, 0, nil)...)
	out = append(out, h2Frame(0x4, 0x1, 0, nil)...) // our ack of the daemon's settings
	for id := uint32(1); id <= 11; id += 2 {
		out = append(out, h2Frame(0x1, 0x4, id, block)...) // HEADERS, END_HEADERS
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	// The daemon resets streams 9 and 11.
	br := bufio.NewReader(nc)
	for reset := 0; reset < 2; {
		var h [9]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			t.Fatalf("reading the daemon's frames: %v", err)
		}
		if _, err := br.Discard(int(h[0])<<16 | int(h[1])<<8 | int(h[2])); err != nil {
			t.Fatal(err)
		}
		if h[3] == 0x3 { // RST_STREAM
			reset++
		}
	}
	for _, what := range []string{"refusing HTTP/2 streams", "every stream"} {
		if _, err := p.stderr.waitFor(guardOf(t), what, "setting=--http2-max-streams", "limit=4"); err != nil {
			t.Fatalf("%v; stderr:\n%s", err, p.stderr)
		}
	}
	nc.Close()
	// Both refusals and the saturated connection are counted.
	hitsCounted(t, strings.TrimSuffix(u, "/acp"), "http2-streams", 3)
	stoppedWithLines(t, p, 1, "refusing HTTP/2 streams")
}
