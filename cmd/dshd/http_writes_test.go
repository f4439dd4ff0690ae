//go:build linux

// End-to-end tests of --write-timeout on what the http(s) listener writes
// outside the ACP streams: /metrics, the probes, the error bodies of
// net/http and of the /acp handler. Before, nothing bounded those writes
// (net/http has no WriteTimeout, since SSE streams are long-lived), so a
// client that asked for them and never read kept its TCP connection, one
// of --max-connections, and a goroutine, for as long as it liked. Linux
// only, as the helpers shared with the other listener tests are.

package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// writeTimeoutWords are what the log line of a write-timeout hit on the
// listener holds besides its peer: the setting and its value.
var writeTimeoutWords = []string{"setting=--write-timeout", "timeout=300ms"}

// writeBound is how long a test waits for the daemon to act on a write
// that makes no progress under a --write-timeout of 300ms: a bound by
// construction, many times the setting, for a loaded machine under -race;
// the daemon that does not bound such writes never acts.
const writeBound = 15 * time.Second

// pipeline writes the batches next returns on nc, never reading, until
// the daemon closes the connection or the test ends; the daemon reads
// the next request only once it has room to answer it.
func pipeline(t *testing.T, nc net.Conn, next func() []byte) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := nc.Write(next()); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		nc.Close()
		<-done
	})
}

// waitWriteCut waits, within writeBound, for the log line of what the
// daemon did to a client that never reads, naming nc's peer and the
// setting with its value (words; writeTimeoutWords when none).
func waitWriteCut(t *testing.T, p *proc, nc net.Conn, what string, words ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(guardOf(t), writeBound)
	defer cancel()
	if len(words) == 0 {
		words = writeTimeoutWords
	}
	words = append([]string{what, "peer=" + nc.LocalAddr().String()}, words...)
	if _, err := p.stderr.waitFor(ctx, words...); err != nil {
		t.Fatalf("the daemon logged no %q within %v: %v; stderr:\n%s", what, writeBound, err, p.stderr)
	}
}

// A client that sends requests on one HTTP/1.1 connection and never reads
// the answers holds the connection until --write-timeout, and no longer:
// with --max-connections 1 everybody else is refused meanwhile, and
// served once it is closed. The close is logged, naming the setting and
// the peer, and counted in /metrics. Before, the connection was held for
// good, and the second client never got in.
func TestHTTP_AClientThatNeverReadsItsAnswersIsClosedAtTheWriteTimeout(t *testing.T) {
	for _, c := range []struct{ name, head string }{
		{"metrics", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		{"a probe", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		{"the /acp handler's refusal", "GET /acp HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n"},
		{"net/http's own answer", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--write-timeout", "300ms", "--max-connections", "1")
			host := hostOf(u)
			stuck := dialSmallWindow(t, host)
			batch := []byte(strings.Repeat(c.head, 64))
			pipeline(t, stuck, func() []byte { return batch })
			if got := rawHTTP(t, host, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 503") {
				t.Fatalf("a second client got %q while the first holds the only connection, want a 503", got)
			}
			waitWriteCut(t, p, stuck, "closed a connection")
			// The line is written once the connection is closed: its slot
			// is free.
			if got := rawHTTP(t, host, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200") {
				t.Fatalf("a client after the close got %q, want a 200", got)
			}
			hitsCounted(t, "http://"+host, "write-timeout", 1)
			stoppedWithLines(t, p, 1, writeTimeoutWords...)
		})
	}
}

// h2Settings is a SETTINGS frame of the (id, value) pairs.
func h2Settings(pairs ...uint32) []byte {
	var b []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		b = binary.BigEndian.AppendUint16(b, uint16(pairs[i]))
		b = binary.BigEndian.AppendUint32(b, pairs[i+1])
	}
	return h2Frame(0x4, 0, 0, b)
}

// h2Get is the HEADERS frame of a GET of path on stream id, with the
// extra header fields (name, value), ending the stream.
func h2Get(id uint32, path string, extra ...string) []byte {
	block := []byte{0x82, 0x86} // :method GET, :scheme http
	block = append(block, hpackLiteral(4, path)...)
	block = append(block, hpackLiteral(1, "127.0.0.1")...)
	for i := 0; i+1 < len(extra); i += 2 {
		block = append(block, 0, byte(len(extra[i])))
		block = append(block, extra[i]...)
		block = append(block, byte(len(extra[i+1])))
		block = append(block, extra[i+1]...)
	}
	return h2Frame(0x1, 0x5, id, block) // END_STREAM, END_HEADERS
}

// h2c opens an h2c connection with prior knowledge, telling the daemon
// the settings.
func h2c(t *testing.T, nc net.Conn, settings ...uint32) {
	t.Helper()
	out := append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), h2Settings(settings...)...)
	out = append(out, h2Frame(0x4, 0x1, 0, nil)...) // our ack of the daemon's settings
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
}

// awaitResets reads nc's frames until the daemon has reset every stream
// of ids, within writeBound, and returns how many DATA bytes it sent on
// them.
func awaitResets(t *testing.T, nc net.Conn, ids ...uint32) int {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(writeBound))
	defer nc.SetReadDeadline(time.Time{})
	open := map[uint32]bool{}
	for _, id := range ids {
		open[id] = true
	}
	data := 0
	for len(open) > 0 {
		var h [9]byte
		if _, err := io.ReadFull(nc, h[:]); err != nil {
			t.Fatalf("the daemon did not reset streams %v within %v: %v", ids, writeBound, err)
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		if _, err := io.CopyN(io.Discard, nc, int64(n)); err != nil {
			t.Fatal(err)
		}
		stream := binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
		switch {
		case !open[stream]:
		case h[3] == 0x0: // DATA
			data += n
		case h[3] == 0x3: // RST_STREAM
			delete(open, stream)
		}
	}
	return data
}

// An HTTP/2 client that gives a stream no flow-control window never lets
// its answer out: the daemon resets the stream at --write-timeout, for
// its own answers (logged, naming the setting, and counted) and for the
// ones net/http writes itself (a 400 for a header HTTP/2 forbids). The
// connection then idles and ends at --keepalive-timeout. Before, the
// handler waited for a window for good, and with it the connection.
func TestHTTP_AnHTTP2StreamWithoutAWindowIsResetAtTheWriteTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--write-timeout", "300ms", "--keepalive-timeout", "300ms")
	host := hostOf(u)
	nc := dialTCP(t, host)
	h2c(t, nc, 0x4, 0) // SETTINGS_INITIAL_WINDOW_SIZE 0
	if _, err := nc.Write(append(h2Get(1, "/metrics"), h2Get(3, "/healthz", "connection", "close")...)); err != nil {
		t.Fatal(err)
	}
	if n := awaitResets(t, nc, 1, 3); n != 0 {
		t.Fatalf("the daemon sent %d bytes of the answers without a window", n)
	}
	waitWriteCut(t, p, nc, "reset an HTTP/2 stream")
	closedBefore(t, nc, writeBound)
	hitsCounted(t, "http://"+host, "write-timeout", 1)
	stoppedWithLines(t, p, 1, writeTimeoutWords...)
}

// An HTTP/2 client that gives the daemon a window and never reads the TCP
// connection stops every write of the connection: the daemon closes it at
// --write-timeout, logged and counted, as on HTTP/1.1.
//
// The setting is longer than the other tests' so that the answers of its
// many streams are all written before it (under -race, on a busy machine,
// the daemon takes its time), filling the connection.
func TestHTTP_AnHTTP2ConnectionThatIsNeverReadIsClosedAtTheWriteTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--write-timeout", "1s", "--max-connections", "1")
	host := hostOf(u)
	nc := dialSmallWindow(t, host)
	h2c(t, nc, 0x4, 1<<30)
	if _, err := nc.Write(h2Frame(0x8, 0, 0, binary.BigEndian.AppendUint32(nil, 1<<30))); err != nil { // the connection's window
		t.Fatal(err)
	}
	// 1500 answers of 6 KiB are more than the daemon's send buffer (4 MiB
	// at most) and the client's receive buffer take, on fewer streams than
	// --http2-max-streams.
	var out []byte
	for id := uint32(1); id < 2*1000; id += 2 {
		out = append(out, h2Get(id, "/metrics")...)
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	waitWriteCut(t, p, nc, "closed a connection", "setting=--write-timeout", "timeout=1s")
	if got := rawHTTP(t, host, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("a client after the close got %q, want a 200", got)
	}
}

// net/http bounds a TLS handshake by the shorter of its read header and
// write timeouts, and dshd now gives it the second: a handshake cut by
// --write-timeout is logged naming that setting, not --header-timeout.
func TestHTTPS_ATLSHandshakeCutByTheShorterWriteTimeoutIsLoggedNamingIt(t *testing.T) {
	cert, key, _ := selfSigned(t)
	p, u := serveHTTP(t, nil, "https://127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--header-timeout", "1m", "--write-timeout", "300ms")
	nc := dialTCP(t, strings.TrimPrefix(hostOf(u), "https://"))
	if _, err := io.WriteString(nc, "\x16\x03\x01"); err != nil {
		t.Fatal(err)
	}
	closedBefore(t, nc, writeBound)
	waitWriteCut(t, p, nc, "no request head arrived in time")
}
