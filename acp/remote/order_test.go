// order_test.go: messages the agent writes in one order reach the client in
// that order even when they take different SSE streams — observed on one
// HTTP/2 connection, whose frames the client reads in the order the server
// wrote them.

package remote

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
)

// newH2CServer is newServer on a listener that also speaks HTTP/2 with
// prior knowledge, as dshd serve does on plaintext.
func newH2CServer(t *testing.T, o Options) (*Handler, *httptest.Server) {
	t.Helper()
	_, h, srv := serveFakeAgent(t, o, func(srv *httptest.Server) {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Config.Protocols = &p
	})
	return h, srv
}

// HTTP/2 frame types and flags the test client uses (RFC 9113 §6).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8

	settingInitialWindowSize = 0x4
)

// h2Client is a minimal HTTP/2 client over one TCP connection: it opens
// GET streams and reads every frame itself, in wire order, so the test
// sees exactly the order in which the server wrote its streams' data.
// Each stream's flow-control window is small, which makes it a slow
// reader: the server can send only window bytes of a stream before the
// client's next WINDOW_UPDATE.
type h2Client struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
	next uint32
	// held streams get no WINDOW_UPDATE: a reader that takes nothing.
	// The server may reset one after its write timeout (reset).
	held  map[uint32]bool
	reset map[uint32]bool
}

func dialH2(t *testing.T, addr string, window uint32) *h2Client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(testkit.Watchdog)) // the watchdog of every read
	c := &h2Client{t: t, conn: conn, br: bufio.NewReader(conn), next: 1, held: map[uint32]bool{}, reset: map[uint32]bool{}}
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	var s [6]byte
	binary.BigEndian.PutUint16(s[:2], settingInitialWindowSize)
	binary.BigEndian.PutUint32(s[2:], window)
	c.write(frameSettings, 0, 0, s[:])
	return c
}

func (c *h2Client) write(typ, flags byte, stream uint32, payload []byte) {
	c.t.Helper()
	h := make([]byte, 9, 9+len(payload))
	h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	h[3], h[4] = typ, flags
	binary.BigEndian.PutUint32(h[5:], stream)
	if _, err := c.conn.Write(append(h, payload...)); err != nil {
		c.t.Fatal(err)
	}
}

// hpackString appends s as an HPACK string literal without Huffman coding
// (RFC 7541 §5.2), its length a 7-bit prefix integer (§5.1).
func hpackString(b []byte, s string) []byte {
	n := len(s)
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n%128+128))
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// get opens a GET stream for an SSE stream of the endpoint and returns its
// id; every header field is a literal without indexing (RFC 7541 §6.2.2).
func (c *h2Client) get(authority, path string, hdr map[string]string) uint32 {
	fields := [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", authority}, {":path", path}, {"accept", mimeEventStream}}
	for k, v := range hdr {
		fields = append(fields, [2]string{strings.ToLower(k), v})
	}
	var block []byte
	for _, f := range fields {
		block = append(block, 0x00)
		block = hpackString(block, f[0])
		block = hpackString(block, f[1])
	}
	id := c.next
	c.next += 2
	c.write(frameHeaders, flagEndStream|flagEndHeaders, id, block)
	return id
}

// frame is one frame the server sent on a stream.
type frame struct {
	typ     byte
	stream  uint32
	payload []byte
}

// read returns the next HEADERS or DATA frame, answering SETTINGS and
// PING and giving back the flow-control credit of each DATA frame (the
// stream's and the connection's) as soon as it is read.
func (c *h2Client) read() frame {
	c.t.Helper()
	for {
		var h [9]byte
		if _, err := io.ReadFull(c.br, h[:]); err != nil {
			c.t.Fatalf("reading a frame: %v", err)
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		f := frame{typ: h[3], stream: binary.BigEndian.Uint32(h[5:]) & 0x7fffffff, payload: make([]byte, n)}
		flags := h[4]
		if _, err := io.ReadFull(c.br, f.payload); err != nil {
			c.t.Fatalf("reading a frame: %v", err)
		}
		switch f.typ {
		case frameSettings:
			if flags&flagAck == 0 {
				c.write(frameSettings, flagAck, 0, nil)
			}
		case framePing:
			if flags&flagAck == 0 {
				c.write(framePing, flagAck, 0, f.payload)
			}
		case frameRSTStream:
			if !c.held[f.stream] {
				c.t.Fatalf("the server ended stream %d (frame type %d): % x", f.stream, f.typ, f.payload)
			}
			c.reset[f.stream] = true
		case frameGoAway:
			c.t.Fatalf("the server ended stream %d (frame type %d): % x", f.stream, f.typ, f.payload)
		case frameHeaders:
			return f
		case frameData:
			if flags&flagPadded != 0 {
				c.t.Fatal("a padded DATA frame; the test client does not strip padding")
			}
			if n > 0 {
				var inc [4]byte
				binary.BigEndian.PutUint32(inc[:], uint32(n))
				c.write(frameWindowUpdate, 0, 0, inc[:])
				if !c.held[f.stream] {
					c.write(frameWindowUpdate, 0, f.stream, inc[:])
				}
			}
			return f
		}
	}
}

// loadOverH2 opens both streams of a new connection on c, the session
// stream for "s1", waits until both are open and POSTs session/load with
// replay updates to replay. It returns the two streams' ids.
func loadOverH2(t *testing.T, srv *httptest.Server, c *h2Client, replay int) (connStream, sessStream uint32) {
	t.Helper()
	u := srv.URL + "/acp"
	id := initialize(t, u)
	authority := strings.TrimPrefix(srv.URL, "http://")
	connStream = c.get(authority, "/acp", map[string]string{HeaderConnectionID: id})
	sessStream = c.get(authority, "/acp", map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	for open := 0; open < 2; {
		f := c.read()
		if f.typ != frameHeaders {
			continue
		}
		// :status 200 is entry 8 of HPACK's static table, sent indexed.
		if len(f.payload) == 0 || f.payload[0] != 0x88 {
			t.Fatalf("stream %d answered % x, want :status 200", f.stream, f.payload)
		}
		open++
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[],"replay":%d}}`, replay)
	if r := post(t, u, body, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("session/load POST: %d", r.StatusCode)
	}
	return connStream, sessStream
}

// loadEvents reads c until until reports true, and returns the events
// seen, in the order their last byte came off the wire: "update" for a
// replayed update on the session stream, "answer" for session/load's
// answer on the connection stream.
func loadEvents(t *testing.T, c *h2Client, connStream, sessStream uint32, until func(order []string) bool) []string {
	t.Helper()
	var order []string
	pending := map[uint32][]byte{}
	for !until(order) {
		f := c.read()
		if f.typ != frameData {
			continue
		}
		buf := append(pending[f.stream], f.payload...)
		for {
			i := bytes.Index(buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			event := string(buf[:i])
			buf = buf[i+2:]
			data, ok := strings.CutPrefix(event, "data: ")
			if !ok {
				continue // a keepalive comment
			}
			switch {
			case f.stream == sessStream && strings.Contains(data, `"replayed `):
				order = append(order, "update")
			case f.stream == connStream && strings.Contains(data, `"id":2`):
				order = append(order, "answer")
			default:
				t.Fatalf("stream %d: unexpected event %s", f.stream, data)
			}
		}
		pending[f.stream] = buf
	}
	return order
}

// TestStreamableHTTP_ALoadsAnswerWaitsForItsReplayOnTheSessionStream is the
// reattach flow of the RFD: both streams open, then session/load, whose
// replayed updates go on the session stream and whose answer goes on the
// connection stream. The agent writes the replay first; a client (the TS
// SDK, Zed) takes the answer to mean the replay is in, so the answer must
// not overtake it even when the session stream's reader is slow — here a
// 256-byte flow-control window, a round trip per 256 bytes of replay.
func TestStreamableHTTP_ALoadsAnswerWaitsForItsReplayOnTheSessionStream(t *testing.T) {
	const replay = 64
	_, srv := newH2CServer(t, Options{})
	c := dialH2(t, srv.Listener.Addr().String(), 256)
	connStream, sessStream := loadOverH2(t, srv, c, replay)
	order := loadEvents(t, c, connStream, sessStream, func(order []string) bool {
		return len(order) == replay+1
	})
	if at := slices.Index(order, "answer"); at != replay {
		t.Fatalf("the session/load answer arrived after %d of the %d replayed updates", at, replay)
	}
}

// TestStreamableHTTP_AStreamThatTakesNothingHoldsTheOthersBackForTheWriteTimeout:
// the session stream's reader takes nothing (no WINDOW_UPDATE), so the
// replay cannot go out; the answer waits for it WriteTimeout, then goes,
// counted as a write-timeout, and the connection lives on. (The stalled
// stream's own write gives up at its WriteTimeout too, which resets that
// stream.)
func TestStreamableHTTP_AStreamThatTakesNothingHoldsTheOthersBackForTheWriteTimeout(t *testing.T) {
	const replay = 64
	obs := &countingObserver{}
	h, srv := newH2CServer(t, Options{WriteTimeout: 50 * time.Millisecond, Observer: obs})
	c := dialH2(t, srv.Listener.Addr().String(), 256)
	c.held[3] = true // the second stream opened: the session's
	connStream, sessStream := loadOverH2(t, srv, c, replay)
	order := loadEvents(t, c, connStream, sessStream, func(order []string) bool {
		return slices.Contains(order, "answer")
	})
	if n := len(order) - 1; n >= replay {
		t.Fatalf("all %d updates came through a stream that grants no window", n)
	}
	// Once for holding the others back, and once more if its own write
	// gave up before the answer was read.
	if n := obs.limit("write-timeout"); n < 1 || n > 2 {
		t.Fatalf("write-timeout hits: %d, want 1 or 2", n)
	}
	h.mu.Lock()
	open := len(h.conns)
	h.mu.Unlock()
	if open != 1 {
		t.Fatalf("%d connections open, want the one whose stream stalled", open)
	}
}

// TestStreamableHTTP_AStreamNobodyOpensHoldsTheOthersBackForTheWriteTimeout:
// a client that sends session/load before it opens the session's stream
// (the RFD has it open the stream first) and opens it only once it has the
// answer gets the answer after WriteTimeout, counted as a write-timeout
// and logged once a connection, and the replay when it opens the stream.
// The stream stops holding the others back until it is read: a second
// load of the session is answered at once.
func TestStreamableHTTP_AStreamNobodyOpensHoldsTheOthersBackForTheWriteTimeout(t *testing.T) {
	const wt = 50 * time.Millisecond
	obs := &countingObserver{}
	var logs testkit.SyncBuffer
	_, _, u := newServer(t, Options{WriteTimeout: wt, Observer: obs, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	id := initialize(t, u)
	conn := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	load := func(reqID int, sid string) time.Duration {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":%q,"cwd":"/","mcpServers":[],"replay":3}}`, reqID, sid)
		sent := time.Now()
		if r := post(t, u, body, map[string]string{HeaderConnectionID: id, HeaderSessionID: sid}); r.StatusCode != http.StatusAccepted {
			t.Fatalf("session/load POST: %d", r.StatusCode)
		}
		for {
			e := conn.next(t)
			if strings.Contains(e, fmt.Sprintf(`"id":%d`, reqID)) {
				return time.Since(sent)
			}
			if e != ":" {
				t.Fatalf("connection stream: %s", e)
			}
		}
	}
	if took := load(2, "s1"); took < wt {
		t.Fatalf("the answer came %v after the load, before the replay's stream was opened or WriteTimeout (%v) passed", took, wt)
	}
	load(3, "s1")
	load(4, "s2")
	if n := obs.limit("write-timeout"); n != 2 {
		t.Fatalf("write-timeout hits: %d, want 2 (s1 and s2)", n)
	}
	if n := strings.Count(logs.String(), "was not opened in time"); n != 1 {
		t.Fatalf("logged %d times, want once a connection:\n%s", n, logs.String())
	}
	sess := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	for i := range 6 {
		if e := sess.next(t); !strings.Contains(e, fmt.Sprintf(`"text":"replayed %d"`, i%3)) {
			t.Fatalf("session stream, update %d: %s", i, e)
		}
	}
}

// waitWritten waits until the agent has written n messages to connection
// id's SSE streams (its initialize answer aside).
func waitWritten(t *testing.T, h *Handler, id string, n uint64) {
	t.Helper()
	waitConn(t, h, id, fmt.Sprintf("the agent wrote fewer than %d messages", n), func(c *httpConn) bool { return c.seq >= n })
}

// TestStreamableHTTP_ALoadsAnswerWaitsForASessionStreamOpenedAfterTheReplay
// is the reattach of a client whose GET for the session stream reaches the
// server only after the agent has handled session/load: the replay waits
// in the session's queue with no reader, and the answer must not go out
// on the connection stream before the replay, which the client sees only
// once its GET is in.
func TestStreamableHTTP_ALoadsAnswerWaitsForASessionStreamOpenedAfterTheReplay(t *testing.T) {
	const replay = 16
	h, srv := newH2CServer(t, Options{})
	c := dialH2(t, srv.Listener.Addr().String(), 1<<20)
	u := srv.URL + "/acp"
	id := initialize(t, u)
	authority := strings.TrimPrefix(srv.URL, "http://")
	connStream := c.get(authority, "/acp", map[string]string{HeaderConnectionID: id})
	if f := c.read(); f.typ != frameHeaders || f.stream != connStream {
		t.Fatalf("want the connection stream's headers, got frame type %d on stream %d", f.typ, f.stream)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[],"replay":%d}}`, replay)
	if r := post(t, u, body, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("session/load POST: %d", r.StatusCode)
	}
	waitWritten(t, h, id, replay+1) // the replay and the answer
	sessStream := c.get(authority, "/acp", map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	order := loadEvents(t, c, connStream, sessStream, func(order []string) bool {
		return len(order) == replay+1
	})
	if at := slices.Index(order, "answer"); at != replay {
		t.Fatalf("the session/load answer arrived after %d of the %d replayed updates", at, replay)
	}
}

// TestStreamableHTTP_AStreamWhoseReaderLeftHoldsNothingBack: only a stream
// nobody has opened yet waits for its first reader; one whose client
// stopped reading it does not hold the others back (here WriteTimeout is
// never, so a hold would last until the watchdog), and its messages wait
// for the next reader.
func TestStreamableHTTP_AStreamWhoseReaderLeftHoldsNothingBack(t *testing.T) {
	_, h, u := newServer(t, Options{WriteTimeout: -1})
	id := initialize(t, u)
	conn := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	sess := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	sess.resp.Body.Close()
	c := h.lookup(id)
	for {
		c.mu.Lock()
		leased, ch := c.streams["s1"].leased, c.changed
		c.mu.Unlock()
		if !leased {
			break
		}
		select {
		case <-ch:
		case <-testkit.Context(t).Done():
			t.Fatal("the server still sees the session stream's reader")
		}
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[],"replay":3}}`
	if r := post(t, u, body, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("session/load POST: %d", r.StatusCode)
	}
	if e := conn.next(t); !strings.Contains(e, `"id":2`) {
		t.Fatalf("connection stream: %s", e)
	}
	again := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	for i := range 3 {
		if e := again.next(t); !strings.Contains(e, fmt.Sprintf(`"text":"replayed %d"`, i)) {
			t.Fatalf("session stream, update %d: %s", i, e)
		}
	}
}

// TestStreamableHTTP_ANewSessionsStreamNobodyOpenedHoldsNothingBack: only
// a stream the client named in a session/load or session/resume waits for
// its first reader. The stream of a session the client made with
// session/new, and has not opened, holds nothing back, so a client that
// makes sessions and opens their streams later is not kept waiting for
// WriteTimeout by the updates queued for them.
func TestStreamableHTTP_ANewSessionsStreamNobodyOpenedHoldsNothingBack(t *testing.T) {
	_, _, u := newServer(t, Options{WriteTimeout: time.Hour})
	id := initialize(t, u)
	conn := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	hdr := map[string]string{HeaderConnectionID: id}
	if r := post(t, u, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, hdr); r.StatusCode != http.StatusAccepted {
		t.Fatalf("session/new POST: %d", r.StatusCode)
	}
	if e := conn.next(t); !strings.Contains(e, `"sessionId":"s1"`) {
		t.Fatalf("connection stream: %s, want the session/new answer", e)
	}
	// The agent sent "ready" for s1 after its answer; s1's stream is not
	// open. The answer to a later request must still come.
	if r := post(t, u, `{"jsonrpc":"2.0","id":3,"method":"echo","params":"after"}`, hdr); r.StatusCode != http.StatusAccepted {
		t.Fatalf("echo POST: %d", r.StatusCode)
	}
	for {
		e := conn.next(t)
		if strings.Contains(e, `"id":3`) {
			break
		}
		if e != ":" {
			t.Fatalf("connection stream: %s", e)
		}
	}
	sess := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	if e := sess.next(t); !strings.Contains(e, `"text":"ready"`) {
		t.Fatalf("session stream: %s, want the update queued for it", e)
	}
}
