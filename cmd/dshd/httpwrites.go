// This file bounds by --write-timeout what the http(s) listener writes
// outside the ACP streams: /metrics, the probes, every error body (the
// /acp handler's, net/http's own), an initialize answer. net/http has no
// bound of its own that fits: http.Server.WriteTimeout runs from a
// request's arrival, and would cut an SSE stream, which is long-lived,
// and a POST that waits for room in its connection's queue before it is
// answered. Without one, a client that asks and never reads keeps a
// connection, one of --max-connections, and a goroutine for good.
//
// Three parts bound it, each where the write can wait: a response must be
// taken whole within the setting from its first byte (boundWrites: a
// deadline on the connection for HTTP/1, on the stream for HTTP/2, where
// a peer that gives a stream no flow-control window stops its answer
// without stopping the connection); any other write of a connection must
// be done within it (headConn.Write: net/http's own answers, an HTTP/2
// connection's frames); and http.Server.WriteTimeout, which the
// response bound replaces on every request dshd handles, is left to
// bound the HTTP/2 answers net/http writes without calling dshd (a 431
// for a header list over its bound, a 400 for a header HTTP/2 forbids),
// which dshd cannot see. An SSE stream's writes are the /acp handler's,
// which bounds them itself (acp/remote, the same setting), and a
// WebSocket's, once hijacked, are the rpc stream's.

package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"time"
)

// Whose write deadline is in force on a headConn.
const (
	// writeFree: none; the connection bounds each write itself.
	writeFree int32 = iota
	// writeBounded: dshd's, from --write-timeout: a response's (set by
	// boundWrites), or net/http's own (http.Server.WriteTimeout, after
	// it read a request).
	writeBounded
	// writeHandler: a handler's (an SSE stream's), which times and logs
	// its writes itself.
	writeHandler
)

// SetWriteDeadline notes the deadlines net/http sets (after a request was
// read, from http.Server.WriteTimeout; around a TLS handshake; cleared by
// net/http's HTTP/2 server, which times each stream instead).
func (c *headConn) SetWriteDeadline(t time.Time) error {
	return c.setWriteDeadline(t, writeBounded)
}

func (c *headConn) setWriteDeadline(t time.Time, owner int32) error {
	if t.IsZero() {
		owner = writeFree
	}
	c.wowner.Store(owner)
	return c.Conn.SetWriteDeadline(t)
}

// Write bounds a write made while no deadline is in force: it must be
// done within --write-timeout. Such writes are small (a frame, a TLS
// record, a short answer of net/http's). Not "some progress within it",
// as HTTP2Config.WriteByteTimeout has it: the kernel of a peer that never
// reads still takes a few bytes now and then (seen: 2 KiB in 3 s), which
// would keep such a write alive for good. A write that times out under
// dshd's bound is noted, and counted and logged once the connection is
// closed, so that its slot is free by then.
func (c *headConn) Write(p []byte) (int, error) {
	wt := c.w.writeTimeout
	if wt <= 0 || http.ConnState(c.state.Load()) == http.StateHijacked {
		return c.Conn.Write(p)
	}
	switch c.wowner.Load() {
	case writeHandler:
		return c.Conn.Write(p)
	case writeBounded:
		n, err := c.Conn.Write(p)
		c.noteWrite(err)
		return n, err
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(wt))
	n, err := c.Conn.Write(p)
	_ = c.Conn.SetWriteDeadline(time.Time{})
	c.noteWrite(err)
	return n, err
}

func (c *headConn) noteWrite(err error) {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.wcut.Store(true)
	}
}

// responseTaken is told that an HTTP/1 connection went idle: its last
// response was written whole, so its deadline is lifted (it must not
// bound what net/http writes before the next one: a 100 Continue, an
// error), and an episode of cuts ends.
func (c *headConn) responseTaken() {
	if c.wowner.Load() != writeBounded {
		return
	}
	_ = c.setWriteDeadline(time.Time{}, writeFree)
	c.w.writesTaken()
}

// connClosed is told that net/http closed the connection: one whose write
// timed out is a hit.
func (c *headConn) connClosed() {
	if c.wcut.Load() {
		c.w.connWriteCut(c.RemoteAddr())
	}
}

// boundWrites bounds each response of h by --write-timeout from its first
// byte, unless its handler sets its own write deadlines (an SSE stream).
func (w *headWatch) boundWrites(h http.Handler) http.Handler {
	if w.writeTimeout <= 0 {
		return h
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b := &boundedResponse{ResponseWriter: rw, rc: http.NewResponseController(rw), w: w, r: r}
		if r.ProtoMajor == 1 {
			b.c = headConnOf(r)
		}
		// Lift the deadline net/http set when it read the request
		// (http.Server.WriteTimeout): a handler may wait before it
		// answers, for as long as its own bounds say.
		_ = b.setDeadline(time.Time{}, writeFree)
		h.ServeHTTP(b, r)
		b.finish()
	})
}

// boundedResponse is a response under boundWrites. Its handler's goroutine
// uses it, one call at a time.
type boundedResponse struct {
	http.ResponseWriter
	rc *http.ResponseController
	w  *headWatch
	r  *http.Request
	c  *headConn // HTTP/1's connection, nil on HTTP/2

	began   time.Time // the first byte, once written
	handler bool      // the handler set its own deadline
	cut     bool      // a write failed past the bound (HTTP/2)
}

// setDeadline sets the response's write deadline: on an HTTP/1 connection
// itself, noting whose it is; on an HTTP/2 stream through net/http.
func (b *boundedResponse) setDeadline(t time.Time, owner int32) error {
	if b.c != nil {
		return b.c.setWriteDeadline(t, owner)
	}
	return b.rc.SetWriteDeadline(t)
}

// begin arms the bound at the response's first byte.
func (b *boundedResponse) begin() {
	if !b.began.IsZero() || b.handler {
		return
	}
	b.began = time.Now()
	_ = b.setDeadline(b.began.Add(b.w.writeTimeout), writeBounded)
}

// note records a write of an HTTP/2 response that failed past the bound:
// net/http reset its stream. (An HTTP/1 connection notes its own.)
func (b *boundedResponse) note(err error) {
	if err != nil && b.c == nil && !b.handler && !b.began.IsZero() && time.Since(b.began) >= b.w.writeTimeout {
		b.cut = true
	}
}

func (b *boundedResponse) WriteHeader(code int) {
	b.begin()
	b.ResponseWriter.WriteHeader(code)
}

func (b *boundedResponse) Write(p []byte) (int, error) {
	b.begin()
	n, err := b.ResponseWriter.Write(p)
	b.note(err)
	return n, err
}

// FlushError is what http.ResponseController.Flush calls.
func (b *boundedResponse) FlushError() error {
	b.begin()
	err := b.rc.Flush()
	b.note(err)
	return err
}

// SetWriteDeadline is a handler taking its writes' deadlines over (an SSE
// stream, through http.ResponseController): the bound steps aside.
func (b *boundedResponse) SetWriteDeadline(t time.Time) error {
	b.handler = true
	return b.setDeadline(t, writeHandler)
}

// Unwrap lets http.ResponseController and coder/websocket reach the rest
// (Hijack, SetReadDeadline, EnableFullDuplex).
func (b *boundedResponse) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// finish ends an HTTP/2 response under the bound: what its handler left
// buffered is written now, within the deadline, rather than by net/http
// after the handler returned, where no failure is seen. (HTTP/1's
// connection sees its own, at responseTaken and connClosed.)
func (b *boundedResponse) finish() {
	if b.c != nil || b.handler || b.began.IsZero() {
		return
	}
	b.note(b.rc.Flush())
	if b.cut {
		b.w.streamWriteCut(b.r.RemoteAddr)
		return
	}
	b.w.writesTaken()
}

// connWriteCut counts a connection closed because a write under
// --write-timeout made no progress, and logs the first of an episode.
func (w *headWatch) connWriteCut(peer net.Addr) {
	w.limitHit("write-timeout")
	if !w.loggedConnCut.Swap(true) {
		w.log.Warn("closed a connection: its peer took none of what it was sent within the write timeout", "setting", "--write-timeout", "timeout", w.writeTimeout, "peer", peer.String())
	}
}

// streamWriteCut counts an HTTP/2 stream reset because its answer was not
// taken within --write-timeout, and logs the first of an episode.
func (w *headWatch) streamWriteCut(peer string) {
	w.limitHit("write-timeout")
	if !w.loggedStreamCut.Swap(true) {
		w.log.Warn("reset an HTTP/2 stream: its peer took none of the answer within the write timeout", "setting", "--write-timeout", "timeout", w.writeTimeout, "peer", peer)
	}
}

// writesTaken ends the episodes of cuts: a response was taken in time.
// Loaded first, as in handler: a store on every response would be a write
// to one cache line from every connection.
func (w *headWatch) writesTaken() {
	if w.loggedConnCut.Load() {
		w.loggedConnCut.Store(false)
	}
	if w.loggedStreamCut.Load() {
		w.loggedStreamCut.Store(false)
	}
}
