// This file makes the http(s) listener's bounds on request heads visible:
// net/http closes a connection whose request head (or TLS handshake) does
// not arrive within --header-timeout without telling the server, so each
// connection notes the read that timed out and which of net/http's
// deadlines was in force; and it answers a head over its own size bound
// itself, so dshd checks --max-header-bytes before it.

package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// headWatch watches the bounds net/http applies to the listener's
// connections and their requests. It logs the connections --header-timeout
// cuts, and the heads over --max-header-bytes, the first of an episode,
// which the next request that arrives in time, or fits, ends (as the
// listener's other refusals are logged); and the HTTP/2 connections that
// have all their --http2-max-streams in use, the first of an episode,
// which ends when no connection has. It counts every hit for /metrics. It
// holds nothing per connection but what the connection itself holds, so
// nothing is left to clean when one ends or is hijacked.
type headWatch struct {
	timeout      time.Duration // --header-timeout
	tls          bool          // the listener's connections are TLS
	maxHead      int           // --max-header-bytes
	maxStreams   int           // --http2-max-streams
	writeTimeout time.Duration // --write-timeout (0: never), see httpwrites.go
	limitHit     func(limit string)
	log          *slog.Logger
	// logged: this episode's first cut was logged; loggedSize: its first
	// head over the size limit; loggedStreams: its first connection
	// with every stream in use; loggedRefused: its first stream over the
	// limit; loggedConnCut, loggedStreamCut: its first connection closed,
	// and HTTP/2 stream reset, at the write timeout.
	logged, loggedSize, loggedStreams, loggedRefused atomic.Bool
	loggedConnCut, loggedStreamCut                   atomic.Bool
	// saturated counts the connections with every stream in use.
	saturated atomic.Int32
}

// headSlack is how far over --max-header-bytes net/http's own bound
// (http.Server.MaxHeaderBytes) is set. net/http answers a head over its
// bound with a 431 that no code of dshd's sees (on TLS it never crosses
// our connection in the clear, on HTTP/2 it is a stream's answer), so the
// bound dshd logs is the handler's, below it: a client whose head grew
// past the setting by up to this much is refused, and logged, by dshd.
const headSlack = 64 << 10

// serverMaxHeaderBytes is http.Server.MaxHeaderBytes for the setting.
func (w *headWatch) serverMaxHeaderBytes() int { return w.maxHead + headSlack }

// headConn is a connection of the listener under the watch. net/http
// reads and sets deadlines on it from the connection's goroutine (and, on
// HTTP/1, from a background read during a handler), and calls ConnState
// from one of those; every field is atomic.
type headConn struct {
	net.Conn
	w *headWatch
	// state is the http.ConnState net/http last reported.
	state atomic.Int32
	// idleDeadlines counts the read deadlines set since the connection
	// last went idle. net/http sets --keepalive-timeout's first, and
	// --header-timeout's once the next request's first bytes are in; a
	// deadline it sets later belongs to that request (StateActive).
	idleDeadlines atomic.Int32
	// cut: this connection's head timed out and was counted.
	cut atomic.Bool
	// handshook: net/http cleared the deadline of this TLS connection's
	// handshake; preface: the deadline in force is the one the watch put
	// in its place, for the HTTP/2 preface (see SetReadDeadline).
	handshook, preface atomic.Bool
	// streams counts the requests of an HTTP/2 connection being handled;
	// saturated is set when they reached --http2-max-streams, until half
	// of them have ended.
	streams   atomic.Int32
	saturated atomic.Bool
	// wowner says whose write deadline is in force (writeFree,
	// writeBounded, writeHandler); wcut: a write under dshd's bound timed
	// out (httpwrites.go).
	wowner atomic.Int32
	wcut   atomic.Bool
}

// listener wraps l so that its connections are watched.
func (w *headWatch) listener(l net.Listener) net.Listener { return headListener{l, w} }

type headListener struct {
	net.Listener
	w *headWatch
}

func (l headListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: nc, w: l.w}, nil
}

// connState is the http.Server's ConnState. On HTTP/2 it is called by the
// HTTP/2 server, with the TLS connection or, on h2c, with ours.
func (w *headWatch) connState(nc net.Conn, s http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*headConn)
	if !ok {
		return
	}
	switch s {
	case http.StateIdle:
		c.idleDeadlines.Store(0)
		c.responseTaken()
	case http.StateClosed:
		c.connClosed()
	}
	// The HTTP/2 server reports its first state once the preface is
	// read, before it reads anything else; its connection reads with no
	// deadline from then on.
	if c.preface.Swap(false) {
		_ = c.Conn.SetReadDeadline(time.Time{})
	}
	c.state.Store(int32(s))
}

// handler ends an episode of cuts (a request head arrived in time) and
// refuses a head over --max-header-bytes; one that fits ends an episode
// of those.
func (w *headWatch) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// Loaded first: a store on every request would be a write to
		// one cache line from every connection.
		if w.logged.Load() {
			w.logged.Store(false)
		}
		if n := headSize(r); n > w.maxHead {
			w.limitHit("header-bytes")
			if !w.loggedSize.Swap(true) {
				w.log.Warn("refusing a request: its head is larger than the limit", "setting", "--max-header-bytes", "limit", w.maxHead, "bytes", n, "peer", r.RemoteAddr)
			}
			http.Error(rw, fmt.Sprintf("the request head is %d bytes, over the limit of %d (--max-header-bytes)", n, w.maxHead), http.StatusRequestHeaderFieldsTooLarge)
			return
		}
		if w.loggedSize.Load() {
			w.loggedSize.Store(false)
		}
		if r.ProtoMajor == 2 {
			if c := headConnOf(r); c != nil {
				w.streamBegins(c, r)
				defer w.streamEnds(c)
			}
		}
		h.ServeHTTP(rw, r)
	})
}

// headConnOf returns the connection r came on.
func headConnOf(r *http.Request) *headConn {
	if p := peerOf(r); p != nil {
		c, _ := p.raw.(*headConn)
		return c
	}
	return nil
}

// streamBegins counts a request of an HTTP/2 connection. When it takes
// the last of --http2-max-streams, the connection's next requests wait
// (net/http runs no more handlers at once than that, and told the
// client so): a hit, logged when it begins an episode.
func (w *headWatch) streamBegins(c *headConn, r *http.Request) {
	if int(c.streams.Add(1)) < w.maxStreams || !c.saturated.CompareAndSwap(false, true) {
		return
	}
	w.limitHit("http2-streams")
	w.saturated.Add(1)
	if !w.loggedStreams.Swap(true) {
		w.log.Warn("an HTTP/2 connection has every stream it may have open in use; its next requests wait", "setting", "--http2-max-streams", "limit", w.maxStreams, "peer", r.RemoteAddr)
	}
}

// streamEnds counts the end of a request of an HTTP/2 connection. A
// connection is no longer saturated once half of its streams are free,
// not at the first that ends, so that a client that keeps every stream
// busy is one episode, not one for each request; the episode ends when no
// connection is saturated, and so does one of streams refused (a client
// can only open too many on a connection that has many open).
func (w *headWatch) streamEnds(c *headConn) {
	if int(c.streams.Add(-1)) > w.maxStreams/2 || !c.saturated.CompareAndSwap(true, false) {
		return
	}
	if w.saturated.Add(-1) == 0 {
		w.loggedStreams.Store(false)
		w.loggedRefused.Store(false)
	}
}

// countError is http.HTTP2Config.CountError: net/http names each HTTP/2
// error of a peer's it answers. A client that opens more streams than the
// limit it was told, or resets more before their handlers run than four
// times it (the HTTP/2 rapid reset), hits --http2-max-streams: net/http
// refuses those streams, or ends the connection.
func (w *headWatch) countError(errType string) {
	for _, suffix := range []string{"_over_max_streams", "_over_max_streams_race", "_too_many_early_resets"} {
		if strings.HasSuffix(errType, suffix) {
			w.limitHit("http2-streams")
			if !w.loggedRefused.Swap(true) {
				w.log.Warn("refusing HTTP/2 streams: a client opened more than the limit it was told", "setting", "--http2-max-streams", "limit", w.maxStreams, "error", errType)
			}
			return
		}
	}
}

// headSize is the size of r's head as HTTP/1 writes it: the request line,
// a line for each header field (Host among them) and the empty line. An
// HTTP/2 request is measured as if it came so, so that one setting
// means the same on both.
func headSize(r *http.Request) int {
	n := len(r.Method) + len(" ") + len(r.RequestURI) + len(" ") + len(r.Proto) + len("\r\n")
	n += len("Host: ") + len(r.Host) + len("\r\n")
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n + len("\r\n")
}

// netHTTPPrefaceWait is how long net/http's HTTP/2 server waits for the
// preface of a client that negotiated HTTP/2 in its TLS handshake: fixed
// (Go 1.26's http2prefaceTimeout), and a close at its end is not told to
// the server.
const netHTTPPrefaceWait = 10 * time.Second

// prefaceWait bounds the HTTP/2 preface after a TLS handshake: the header
// timeout, as for every other first request of a connection, but a
// second short of net/http's own wait, so that it is dshd's deadline
// that cuts the connection, and the cut is seen.
func (w *headWatch) prefaceWait() time.Duration {
	return min(w.timeout, netHTTPPrefaceWait-time.Second)
}

// SetReadDeadline notes the deadlines net/http sets. When the TLS
// handshake of a connection is over, net/http clears the handshake's
// deadline and, for HTTP/1, sets --header-timeout's at once; for HTTP/2
// it sets none while its server waits for the preface. So the first clear
// of a TLS connection that has not made a request is replaced by the
// preface's deadline, which net/http's next deadline replaces on HTTP/1,
// and which connState lifts on HTTP/2 once the preface is in.
func (c *headConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() && c.w.tls && http.ConnState(c.state.Load()) == http.StateNew && c.handshook.CompareAndSwap(false, true) {
		t = time.Now().Add(c.w.prefaceWait())
		c.preface.Store(true)
	} else if c.preface.Load() {
		c.preface.Store(false)
	}
	c.noteDeadline(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *headConn) SetDeadline(t time.Time) error {
	c.noteDeadline(t)
	owner := writeBounded
	if t.IsZero() {
		owner = writeFree
	}
	c.wowner.Store(owner)
	return c.Conn.SetDeadline(t)
}

func (c *headConn) noteDeadline(t time.Time) {
	if !t.IsZero() && http.ConnState(c.state.Load()) == http.StateIdle {
		c.idleDeadlines.Add(1)
	}
}

func (c *headConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && c.awaitsHead() && c.cut.CompareAndSwap(false, true) {
		c.w.hit(c)
	}
	return n, err
}

// awaitsHead reports whether the deadline in force is --header-timeout's.
// Before its first request (StateNew) a connection reads its TLS
// handshake, the h2c preface or a request head, all under that deadline
// (net/http bounds the handshake by ReadHeaderTimeout when no other read
// timeout is set, and none is). Idle, it is under --keepalive-timeout's
// until the next request begins (both settings refuse 0, so net/http
// sets both deadlines). Once a request is read (StateActive) a
// timeout is net/http ending its own background read, or a handler's
// deadline; hijacked, the connection is the handler's.
func (c *headConn) awaitsHead() bool {
	switch http.ConnState(c.state.Load()) {
	case http.StateNew:
		return true
	case http.StateIdle:
		return c.idleDeadlines.Load() >= 2
	}
	return false
}

// hit counts a connection net/http is about to close at --header-timeout,
// and logs the first of an episode.
func (w *headWatch) hit(c *headConn) {
	w.limitHit("header-timeout")
	if !w.logged.Swap(true) {
		setting, timeout := w.boundOf(c)
		w.log.Warn("closing a connection: no request head arrived in time", "setting", setting, "timeout", timeout, "peer", c.RemoteAddr().String())
	}
}

// boundOf names the setting whose deadline cut c's head: --header-timeout,
// but during a TLS handshake net/http takes the shorter of it and
// http.Server.WriteTimeout (--write-timeout).
func (w *headWatch) boundOf(c *headConn) (string, time.Duration) {
	if w.tls && !c.handshook.Load() && w.writeTimeout > 0 && w.writeTimeout < w.timeout {
		return "--write-timeout", w.writeTimeout
	}
	return "--header-timeout", w.timeout
}
