// End-to-end tests of `dshd serve --listen http(s)://`: ACP over WebSocket
// and Streamable HTTP on HTTP/1.1, h2c and HTTP/2 over TLS, the token, the
// probes, and the drain on SIGTERM.

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// serveHTTP starts a daemon on an http(s) listener on a free loopback port
// and returns it with its /acp URL.
func serveHTTP(t testing.TB, env []string, listen string, extra ...string) (*proc, string) {
	t.Helper()
	args := append([]string{"serve", "--listen", listen, "--model", "scripted", "--state-dir", t.TempDir()}, extra...)
	p := start(t, opts{env: env}, args...)
	line, err := p.stderr.waitFor(testkit.Context(t), "dshd listening")
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	return p, m[1]
}

// remoteWire dials url with the remote transport and returns a wire on it.
func remoteWire(t testing.TB, url string, o *remote.DialOptions) *wire {
	t.Helper()
	rwc, err := remote.Dial(testkit.Context(t), url, o)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c := newWire(t, rwc, rwc, rwc)
	t.Cleanup(func() {
		rwc.Close()
		<-c.done
	})
	return c
}

func wsURL(u string) string { return "ws" + strings.TrimPrefix(u, "http") }

// turn runs a session with one streamed prompt.
func turn(t *testing.T, c *wire) {
	ctx := testkit.Context(t)
	if res := c.initialize(ctx, nil); res.AgentInfo.Name != "dshd" {
		t.Fatalf("initialize: %+v", res)
	}
	sid := c.newSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "hello over the wire")
	text := ""
	for _, n := range c.updates(sid) {
		if n.Kind == "agent_message_chunk" {
			var u struct{ Content struct{ Text string } }
			_ = json.Unmarshal(n.Update, &u)
			text += u.Content.Text
		}
	}
	if text != "You said: hello over the wire" {
		t.Fatalf("answer %q", text)
	}
}

func TestRemote_WebSocketAndStreamableHTTPOnHTTP1AndH2C(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0")
	h2c := func() *http.Client {
		var protos http.Protocols
		protos.SetUnencryptedHTTP2(true)
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Transport: &http.Transport{Protocols: &protos}}
	}
	t.Run("WebSocket", func(t *testing.T) { turn(t, remoteWire(t, wsURL(u), nil)) })
	t.Run("Streamable HTTP on HTTP/1.1", func(t *testing.T) { turn(t, remoteWire(t, u, nil)) })
	t.Run("Streamable HTTP on h2c", func(t *testing.T) {
		cl := h2c()
		defer cl.CloseIdleConnections()
		resp, err := cl.Get(strings.TrimSuffix(u, "/acp") + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("h2c answered on HTTP/%d", resp.ProtoMajor)
		}
		c := remoteWire(t, u, &remote.DialOptions{Client: cl})
		turn(t, c)
		c.closer.Close()
	})
	p.stop(t)
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dshd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestRemote_TLSServesHTTP2AndWebSocketsWithTheToken(t *testing.T) {
	cert, key, pool := selfSigned(t)
	token := "tls-token-0123456789abcdef"
	p, u := serveHTTP(t, []string{"DSHD_TOKEN=" + token}, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	client := func(h2 bool) *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Transport: tr}
	}
	t.Run("Streamable HTTP on HTTP/2", func(t *testing.T) {
		cl := client(true)
		defer cl.CloseIdleConnections()
		resp, err := cl.Get(strings.TrimSuffix(u, "/acp") + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
			t.Fatalf("/readyz over TLS: HTTP/%d %d", resp.ProtoMajor, resp.StatusCode)
		}
		c := remoteWire(t, u, &remote.DialOptions{Client: cl, Token: token})
		turn(t, c)
		c.closer.Close()
	})
	t.Run("WebSocket over TLS", func(t *testing.T) {
		cl := client(false)
		defer cl.CloseIdleConnections()
		turn(t, remoteWire(t, wsURL(u), &remote.DialOptions{Client: cl, Token: token}))
	})
	t.Run("a wrong token is refused before ACP", func(t *testing.T) {
		cl := client(true)
		defer cl.CloseIdleConnections()
		var se *remote.StatusError
		if _, err := remote.Dial(testkit.Context(t), wsURL(u), &remote.DialOptions{Client: cl, Token: "wrong-token-0123456789"}); !errors.As(err, &se) || se.Status != 403 {
			t.Fatalf("wrong token: %v", err)
		}
	})
	p.stop(t)
}

func TestRemote_AListenerOffLoopbackNeedsAToken(t *testing.T) {
	code, _, stderr := runDshd(t, nil, "serve", "--listen", "http://0.0.0.0:0", "--model", "scripted", "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "needs a token") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	code, _, stderr = runDshd(t, nil, "serve", "--listen", "https://127.0.0.1:0", "--model", "scripted", "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--tls-cert") {
		t.Fatalf("https without a certificate: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestRemote_AWrongTokenNeverReachesACP(t *testing.T) {
	token := "remote-token-0123456789"
	// Four refusals from one source: more than the brake's default allows.
	p, u := serveHTTP(t, []string{"DSHD_TOKEN=" + token}, "http://127.0.0.1:0", "--log-level", "debug", "--max-auth-failures", "5")
	for _, tok := range []string{"", "wrong-token-0123456789"} {
		for _, url := range []string{u, wsURL(u)} {
			rwc, err := remote.Dial(testkit.Context(t), url, &remote.DialOptions{Token: tok})
			if err == nil {
				// Streamable HTTP learns of the refusal at initialize.
				c := newWire(t, rwc, rwc, rwc)
				_, err = c.callErr(testkit.Context(t), "initialize", map[string]any{"protocolVersion": 1})
				<-c.done
			}
			var se *remote.StatusError
			want := 401
			if tok != "" {
				want = 403
			}
			if !errors.As(err, &se) && !strings.Contains(errString(err), http.StatusText(want)) {
				t.Fatalf("%s with token %q: %v, want %d", url, tok, err, want)
			}
		}
	}
	base := strings.TrimSuffix(u, "/acp")
	m := scrape(t, base)
	if m["dshd_connections_total"] != 0 || m["dshd_sessions_opened_total"] != 0 || m[`dshd_limits_hit_total{limit="auth"}`] != 4 {
		t.Fatalf("a refused request reached ACP, or was not counted: %v", m)
	}
	turn(t, remoteWire(t, wsURL(u), &remote.DialOptions{Token: token}))
	if m := scrape(t, base); m[`dshd_connections_total{transport="websocket"}`] != 1 || m["dshd_sessions_opened_total"] != 1 {
		t.Fatalf("the right token's connection was not counted: %v", m)
	}
	p.stop(t)
}

// scrape reads /metrics into a map from a series (name and labels) to
// its value; a name alone sums its series. A 503 is asked again: a daemon
// at --max-connections learns that a connection the test just finished
// is gone only after the test saw it close, so its slot may still be
// taken for a moment. Any other answer but a 200 fails the test.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	ctx := testkit.Context(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var b []byte
	for {
		resp, err := cl.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/metrics answered %s: %s", resp.Status, b)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("/metrics answered 503 until the test's end: %s", b)
		}
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		series := line[:i]
		out[series] = v
		if j := strings.IndexByte(series, '{'); j >= 0 {
			out[series[:j]] += v
		}
	}
	return out
}

func TestRemote_MetricsCountConnectionsSessionsTurnsModelRequestsAndToolCalls(t *testing.T) {
	script := writeScript(t, `{"rules":[
	 {"user":"^look","step":0,"text":"looking","toolCalls":[{"name":"list_dir","arguments":{"path":"."}}],"usage":{"input":7,"output":3}},
	 {"user":"^look","step":1,"text":"seen","usage":{"input":9,"output":2}}]}`)
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--mode", "yolo", "--model", "scripted:"+script)
	base := strings.TrimSuffix(u, "/acp")
	ctx := testkit.Context(t)
	c := remoteWire(t, u, nil)
	sid := c.openSession(ctx, t.TempDir())
	if stop := c.prompt(ctx, sid, "look around"); stop != "end_turn" {
		t.Fatalf("stop %q", stop)
	}
	// The turn counts as running until its answer is on the wire, so
	// the daemon ends it just after the client read the answer: scrape
	// until it has (each scrape a round trip, under the hang guard).
	m := scrape(t, base)
	for m["dshd_turns_running"] != 0 && ctx.Err() == nil {
		m = scrape(t, base)
	}
	for series, want := range map[string]float64{
		`dshd_connections_total{transport="http"}`:  1,
		`dshd_connections_open{transport="http"}`:   1,
		"dshd_acp_connections":                      1,
		"dshd_sessions_opened_total":                1,
		"dshd_sessions_open":                        1,
		`dshd_turns_total{stop_reason="end_turn"}`:  1,
		`dshd_model_requests_total{outcome="ok"}`:   2,
		"dshd_model_request_duration_seconds_count": 2,
		`dshd_tool_calls_total{status="completed"}`: 1,
		`dshd_tokens_total{kind="input"}`:           16,
		`dshd_tokens_total{kind="output"}`:          5,
		"dshd_turn_duration_seconds_count":          1,
		"dshd_turns_running":                        0,
		"dshd_draining":                             0,
	} {
		if m[series] != want {
			t.Errorf("%s = %v, want %v", series, m[series], want)
		}
	}
	if _, ok := m["process_resident_memory_bytes"]; !ok {
		t.Errorf("no process metrics")
	}
	p.stop(t)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRemote_SIGTERMDrainsRunningTurnsThenCancelsAndJournalsThem(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	script := writeScript(t, `{"rules":[
	 {"user":"^wait-for-gate","step":0,"text":"waiting","toolCalls":[{"name":"run_command","arguments":{"command":"while [ ! -e `+gate+` ]; do sleep 0.02; done; echo through"}}]},
	 {"user":"^wait-for-gate","step":1,"text":"gate passed"},
	 {"user":"^hang","text":"hanging","hang":true},
	 {"text":"You said: {{user}}"}]}`)
	state := t.TempDir()
	p := start(t, opts{}, "serve", "--listen", "http://127.0.0.1:0", "--model", "scripted:"+script, "--state-dir", state, "--mode", "yolo", "--drain-grace-seconds", "60")
	line, err := p.stderr.waitFor(testkit.Context(t), "dshd listening")
	if err != nil {
		t.Fatal(err)
	}
	u := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)[1]
	base := strings.TrimSuffix(u, "/acp")
	ctx := testkit.Context(t)

	c := remoteWire(t, wsURL(u), nil)
	sid := c.openSession(ctx, dir)
	running := c.promptAsync(sid, "wait-for-gate")
	c.waitUpdates(ctx, sid, func(ns []note) bool { return count(ns, "tool_call") > 0 })
	if code := status(t, base+"/readyz"); code != 200 {
		t.Fatalf("/readyz before the drain: %d", code)
	}
	p.signal(syscall.SIGTERM)
	if _, err := p.stderr.waitFor(ctx, "draining"); err != nil {
		t.Fatal(err)
	}
	if code := status(t, base+"/readyz"); code != 503 {
		t.Fatalf("/readyz while draining: %d, want 503", code)
	}
	if code := status(t, base+"/healthz"); code != 200 {
		t.Fatalf("/healthz while draining: %d, want 200", code)
	}
	// New work is refused: a new connection, and a new session on an old one.
	var se *remote.StatusError
	if _, err := remote.Dial(ctx, wsURL(u), nil); !errors.As(err, &se) || se.Status != 503 {
		t.Fatalf("a new connection while draining: %v", err)
	}
	if e := c.callFail(ctx, "session/new", newParams(dir)); !strings.Contains(string(e.Data), "shutting down") {
		t.Fatalf("session/new while draining: %+v", e)
	}
	// The running turn finishes within the grace.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if stop := stopReason(ctx, t, running); stop != "end_turn" {
		t.Fatalf("the running turn ended %q, want end_turn", stop)
	}
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}

	// With a short grace, a turn that does not finish is cancelled and its
	// journal keeps it.
	p = start(t, opts{}, "serve", "--listen", "http://127.0.0.1:0", "--model", "scripted:"+script, "--state-dir", state, "--drain-grace-seconds", "1", "--log-level", "debug")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr:\n%s", p.stderr)
		}
	})
	line, err = p.stderr.waitFor(ctx, "dshd listening")
	if err != nil {
		t.Fatal(err)
	}
	u = regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)[1]
	c = remoteWire(t, u, nil)
	sid2 := c.openSession(ctx, dir)
	hung := c.promptAsync(sid2, "hang on")
	c.waitUpdates(ctx, sid2, func(ns []note) bool { return count(ns, "agent_message_chunk") > 0 })
	p.signal(syscall.SIGTERM)
	if stop := stopReason(ctx, t, hung); stop != "cancelled" {
		t.Fatalf("the hanging turn ended %q, want cancelled", stop)
	}
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "cancelling the turns still running") {
		t.Fatalf("no word of the cancelled turns:\n%s", p.stderr)
	}
	// The journal has both sessions' turns: load them on a stdio daemon.
	q := start(t, opts{}, "serve", "--model", "scripted:"+script, "--state-dir", state)
	w := stdioWire(q)
	w.initialize(ctx, nil)
	for id, want := range map[string]string{sid: "wait-for-gate", sid2: "hang on"} {
		w.call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}}, nil)
		found := false
		for _, n := range w.updates(id) {
			if n.Kind == "user_message_chunk" && strings.Contains(string(n.Update), want) {
				found = true
			}
		}
		if !found {
			t.Fatalf("the journal of %s lacks the prompt %q", id, want)
		}
	}
	q.hangUp(ctx)
}

func status(t *testing.T, url string) int {
	t.Helper()
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
