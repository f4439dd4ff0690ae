// This file makes the http(s) listener's --header-timeout visible: net/http
// closes a connection whose request head (or TLS handshake) does not
// arrive in time without telling the server, so each connection notes
// the read that timed out and which of net/http's deadlines was in force.

package main

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// headWatch logs the connections --header-timeout cuts: the first of an
// episode, which the next request that arrives in time ends (as the
// listener's other refusals are logged), and counts every one for
// /metrics. It holds nothing per connection but what the connection
// itself holds, so nothing is left to clean when one ends or is hijacked.
type headWatch struct {
	timeout  time.Duration // --header-timeout
	limitHit func(limit string)
	log      *slog.Logger
	// logged: this episode's first cut was logged.
	logged atomic.Bool
}

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
	if s == http.StateIdle {
		c.idleDeadlines.Store(0)
	}
	c.state.Store(int32(s))
}

// handler ends an episode of cuts: a request head arrived in time.
func (w *headWatch) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// Loaded first: a store on every request would be a write to
		// one cache line from every connection.
		if w.logged.Load() {
			w.logged.Store(false)
		}
		h.ServeHTTP(rw, r)
	})
}

func (c *headConn) SetReadDeadline(t time.Time) error {
	c.noteDeadline(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *headConn) SetDeadline(t time.Time) error {
	c.noteDeadline(t)
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
		c.w.hit(c.RemoteAddr())
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
func (w *headWatch) hit(peer net.Addr) {
	w.limitHit("header-timeout")
	if !w.logged.Swap(true) {
		w.log.Warn("closing a connection: no request head arrived in time", "setting", "--header-timeout", "timeout", w.timeout, "peer", peer.String())
	}
}
