// streamable.go: the Streamable HTTP requests — POST a message, GET an SSE
// stream, DELETE a connection — with the RFD's status codes.

package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// takeOverWait bounds how long reattaching a session waits for the stale
// connection that held it to end.
const takeOverWait = 10 * time.Second

// batchError is the JSON-RPC answer to a batch, sent with status 501.
var batchError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"JSON-RPC batches are not supported"}}}` + "\n")

// keepaliveComment is the SSE comment that keeps an idle stream alive.
var keepaliveComment = []byte(":\n\n")

// servePost takes one client message: initialize opens a connection and
// is answered 200 with the agent's answer; anything else is queued for the
// agent and answered 202, its answer coming on an SSE stream.
func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != mimeJSON {
		textError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	connID := r.Header.Get(HeaderConnectionID)
	if connID == "" {
		// The POST that opens a connection is its handshake: its body
		// must arrive within HandshakeTimeout, as a socket's first line
		// must, or a peer could hold a TCP connection for ever by
		// trickling it.
		rc := http.NewResponseController(w)
		if d := h.o.HandshakeTimeout; d > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(d))
		}
		body, env, ok := h.readMessage(w, r, h.o.MaxInitializeBytes, nil)
		if !ok {
			// The deadline stays: the server's reading of what is left
			// of the body ends with it, and so does the connection.
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		if env.method != methodInitialize || !env.isRequest() {
			textError(w, http.StatusBadRequest, "missing "+HeaderConnectionID)
			return
		}
		h.initialize(w, r, env, body)
		return
	}
	c := h.lookup(connID)
	if c == nil {
		textError(w, http.StatusNotFound, "unknown "+HeaderConnectionID)
		return
	}
	if err := c.beginRead(r.Context()); err != nil {
		h.refusedPut(w, c)
		return
	}
	defer c.endRead()
	rc := http.NewResponseController(w)
	if d := h.o.IdleTimeout; d > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(d))
	}
	body, env, ok := h.readMessage(w, r, h.o.MaxMessageBytes, c)
	if !ok {
		return // the deadline stays, as for initialize
	}
	_ = rc.SetReadDeadline(time.Time{})
	if env.method == methodInitialize && env.isRequest() {
		textError(w, http.StatusBadRequest, "initialize is not allowed on an existing connection")
		return
	}
	sid := r.Header.Get(HeaderSessionID)
	c.touch()
	switch {
	case env.hasMethod:
		if (sessionScoped[env.method] || env.paramsSession != "") && sid == "" {
			textError(w, http.StatusBadRequest, "missing "+HeaderSessionID)
			return
		}
		if sid != "" && env.paramsSession != "" && sid != env.paramsSession {
			textError(w, http.StatusBadRequest, "mismatched "+HeaderSessionID)
			return
		}
		if sid != "" && (env.method == methodSessionLoad || env.method == methodSessionResume) {
			h.takeOver(r, sid, c)
		}
		c.mu.Lock()
		if env.isRequest() && env.echoable() {
			// The RFD answers session/new and session/load on the
			// connection stream; other session requests on the session's.
			// A request whose id the agent cannot echo is answered with a
			// null id, on the connection stream: a route kept for it
			// would never be taken.
			to := sid
			if env.method == methodSessionLoad || env.method == methodSessionNew {
				to = ""
			}
			c.routes[env.key()] = to
		}
		if sid != "" {
			mb := c.ensure(sid)
			if mb.sid != "" && (env.method == methodSessionLoad || env.method == methodSessionResume) {
				mb.awaited = true
			}
		}
		c.mu.Unlock()
	case env.isResponse():
		c.mu.Lock()
		want, asked := c.asked[env.key()]
		if asked && want != "" && sid != want {
			c.mu.Unlock()
			textError(w, http.StatusBadRequest, "mismatched or missing "+HeaderSessionID)
			return
		}
		delete(c.asked, env.key())
		c.mu.Unlock()
	}
	if err := c.in.put(r.Context(), body); err != nil {
		h.refusedPut(w, c)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// refusedPut answers a POST whose message could not be queued: the
// connection ended (404), or the request went first.
func (h *Handler) refusedPut(w http.ResponseWriter, c *httpConn) {
	if c.ended() {
		textError(w, http.StatusNotFound, "unknown "+HeaderConnectionID)
		return
	}
	textError(w, http.StatusServiceUnavailable, "the request was cancelled")
}

// readMessage reads a POST body of at most limit bytes holding one
// JSON-RPC message, and returns it as one line with its envelope. It
// answers the request itself (413, 501, 400) and reports false when the
// body is not that; c is the connection the body is for, nil for one that
// opens a connection.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request, limit int, c *httpConn) ([]byte, envelope, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			limit, setting, timeout, first := "idle", h.o.Settings.IdleTimeout, h.o.IdleTimeout, false
			if c == nil {
				limit, setting, timeout = "handshake", h.o.Settings.HandshakeTimeout, h.o.HandshakeTimeout
				first = !h.loggedSlow.Swap(true)
			} else {
				first = c.firstHit(&c.loggedSlow)
			}
			h.o.Observer.LimitHit(limit)
			if first {
				h.log.Warn("refusing a POST whose body did not arrive in time", "setting", setting, "initialize", c == nil, "timeout", timeout, "peer", r.RemoteAddr)
			}
			w.Header().Set("Connection", "close")
			textError(w, http.StatusRequestTimeout, "the request body did not arrive in time")
			return nil, envelope{}, false
		case !errors.As(err, &tooBig):
			textError(w, http.StatusBadRequest, "cannot read the request body")
			return nil, envelope{}, false
		}
		h.o.Observer.LimitHit("message-size")
		first, setting := false, h.o.Settings.MaxInitializeBytes
		if c != nil {
			first, setting = c.firstHit(&c.loggedSize), h.o.Settings.MaxMessageBytes
		} else {
			first = !h.loggedInit.Swap(true)
		}
		if first {
			h.log.Warn("refusing a POST larger than the message limit", "setting", setting, "limit", limit, "initialize", c == nil, "peer", r.RemoteAddr)
		}
		textError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the message is larger than the limit of %d bytes", limit))
		return nil, envelope{}, false
	}
	if c == nil {
		h.loggedInit.Store(false)
		h.loggedSlow.Store(false)
	}
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '[':
		w.Header().Set("Content-Type", mimeJSON)
		w.WriteHeader(http.StatusNotImplemented)
		_, _ = w.Write(batchError)
		return nil, envelope{}, false
	case len(body) == 0 || body[0] != '{':
		textError(w, http.StatusBadRequest, "the body is not a JSON-RPC message")
		return nil, envelope{}, false
	}
	env, err := parseEnvelope(body)
	if err != nil {
		textError(w, http.StatusBadRequest, "the body is not valid JSON")
		return nil, envelope{}, false
	}
	return append(oneLine(body), '\n'), env, true
}

// initialize opens a connection with the client's initialize request and
// answers with the agent's answer and the new Acp-Connection-Id.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, env envelope, body []byte) {
	if !h.admit(w, r) {
		return
	}
	c := h.newHTTPConn(addrOf(r))
	c.initKey = env.key()
	resp := make(chan []byte, 1)
	c.initResp = resp
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.release()
		textError(w, http.StatusServiceUnavailable, "the daemon is shutting down")
		return
	}
	h.conns[c.id] = c
	h.wg.Go(c.serve)
	h.mu.Unlock()
	if err := c.in.put(r.Context(), body); err != nil {
		c.close("the initialize request was cancelled")
		return
	}
	var deadline <-chan time.Time
	if h.o.HandshakeTimeout > 0 {
		timer := time.NewTimer(h.o.HandshakeTimeout)
		defer timer.Stop()
		deadline = timer.C
	}
	var answer []byte
	select {
	case answer = <-resp:
	case <-c.done:
		textError(w, http.StatusInternalServerError, "the agent ended the connection before answering initialize")
		return
	case <-deadline:
		c.close("initialize was not answered in time")
		textError(w, http.StatusGatewayTimeout, "the agent did not answer initialize in time")
		return
	case <-r.Context().Done():
		c.close("the client went away during initialize")
		return
	}
	c.mu.Lock()
	c.armIdle()
	c.mu.Unlock()
	w.Header().Set(HeaderConnectionID, c.id)
	w.Header().Set("Content-Type", mimeJSON)
	h.setAffinity(w)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
}

// serveStream opens an SSE stream: the connection-scoped one, or with
// Acp-Session-Id the session-scoped one. At most one reader holds a stream
// at a time (409 for a second); what the agent sends while nobody reads
// waits for the next reader.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r) {
		textError(w, http.StatusNotAcceptable, "Accept must include text/event-stream")
		return
	}
	c := h.connOf(w, r)
	if c == nil {
		return
	}
	sid := r.Header.Get(HeaderSessionID)
	if sid != "" {
		c.mu.Lock()
		known := c.streams[sid] != nil
		c.mu.Unlock()
		if !known && h.o.SessionExists != nil && !h.o.SessionExists(sid) {
			textError(w, http.StatusNotFound, "unknown "+HeaderSessionID)
			return
		}
		h.takeOver(r, sid, c)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		textError(w, http.StatusNotFound, "unknown "+HeaderConnectionID)
		return
	}
	mb := c.ensure(sid)
	if sid != "" && mb == c.streams[""] {
		c.mu.Unlock()
		textError(w, http.StatusServiceUnavailable, "the connection has too many session streams")
		return
	}
	if mb.leased {
		c.mu.Unlock()
		textError(w, http.StatusConflict, "the stream already has a reader")
		return
	}
	mb.leased, mb.opened = true, true
	c.receivers++
	c.broadcast() // streams waiting for this one to be opened time its reader now
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		mb.leased = false
		c.receivers--
		c.armIdle()
		c.broadcast()
		c.mu.Unlock()
	}()
	c.pump(w, r, mb)
}

// pump writes a stream's messages as SSE events, with a keepalive comment
// every KeepAlive, until the client goes away or the connection ends. A
// message goes only once the messages the agent wrote before it on other
// streams are written and flushed (see queued); the wait for a stream
// whose reader takes nothing, or that nobody opens, is bounded by
// WriteTimeout (see holding).
func (c *httpConn) pump(w http.ResponseWriter, r *http.Request, mb *mailbox) {
	w.Header().Set("Content-Type", mimeEventStream)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	// Every write is bounded by WriteTimeout: a reader that takes nothing
	// would otherwise hold this goroutine, its TCP connection and the
	// batch being written for as long as it keeps the socket open, also
	// after the connection was ended for it. A write that times out ends
	// the response and its TCP connection (an HTTP/2 stream is reset).
	// The deadline is cleared after each write: on HTTP/2 it runs also
	// while nothing is written, and would end an idle stream.
	rc := http.NewResponseController(w)
	wt := c.h.o.WriteTimeout
	send := func(b []byte) error {
		started := time.Now()
		if wt > 0 {
			_ = rc.SetWriteDeadline(started.Add(wt))
		}
		var err error
		if len(b) > 0 {
			_, err = w.Write(b)
		}
		if err == nil {
			if err = rc.Flush(); errors.Is(err, http.ErrNotSupported) {
				err = nil
			}
		}
		switch {
		case err != nil && wt > 0 && time.Since(started) >= wt:
			c.cut(mb)
		case wt > 0:
			_ = rc.SetWriteDeadline(time.Time{})
		}
		return err
	}
	if send(nil) != nil {
		return
	}
	var tick <-chan time.Time
	if ka := c.h.o.KeepAlive; ka > 0 {
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	// gate times the wait for holder, the stream whose earlier messages
	// this one waits on: while holder has a reader, it runs while no
	// reader of the connection takes anything; while nobody has opened
	// holder, it ends WriteTimeout after holder's first message (unread).
	var gate *time.Timer
	var gateHolder *mailbox
	var gateTaken uint64
	var gateUnread time.Time // zero once holder has been opened
	defer func() {
		if gate != nil {
			gate.Stop()
		}
	}()
	var buf []byte
	for {
		c.mu.Lock()
		n, holder := c.sendable(mb)
		if n > 0 {
			batch := mb.q[:n:n]
			c.mu.Unlock()
			buf = buf[:0]
			size := 0
			for _, m := range batch {
				buf = append(buf, "data: "...)
				buf = append(buf, m.msg...)
				buf = append(buf, '\n', '\n')
				size += len(m.msg)
			}
			err := send(buf)
			c.mu.Lock()
			clear(mb.q[:n]) // let the written messages go
			mb.q = mb.q[n:]
			if len(mb.q) == 0 {
				mb.q = nil
			}
			mb.stalled = false
			c.queued -= size
			c.taken += uint64(n)
			c.broadcast()
			c.mu.Unlock()
			if err != nil {
				return
			}
			continue
		}
		if c.closed && len(mb.q) == 0 {
			c.mu.Unlock()
			return
		}
		var stalled <-chan time.Time
		var unread time.Time
		if holder != nil && !holder.leased {
			unread = holder.unread
		}
		switch wt := c.h.o.WriteTimeout; {
		case holder == nil || wt < 0:
			if gate != nil {
				gate.Stop()
				gate = nil
			}
		case gate == nil || holder != gateHolder || !unread.Equal(gateUnread) || unread.IsZero() && c.taken != gateTaken:
			d := wt
			if !unread.IsZero() {
				d = time.Until(unread.Add(wt))
			}
			if gate == nil {
				gate = time.NewTimer(d)
			} else {
				gate.Reset(d)
			}
			gateHolder, gateTaken, gateUnread = holder, c.taken, unread
			stalled = gate.C
		default:
			stalled = gate.C
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-stalled:
			gate = nil
			c.mu.Lock()
			switch {
			case !gateUnread.IsZero():
				if !gateHolder.leased && gateHolder.unread.Equal(gateUnread) {
					c.stall(gateHolder, true)
				}
			case c.taken == gateTaken:
				c.stall(gateHolder, false)
			}
			c.mu.Unlock()
		case <-r.Context().Done():
			return
		case <-tick:
			if send(keepaliveComment) != nil {
				return
			}
		}
	}
}

// serveDelete ends a connection and its sessions, waiting (within the
// request) until the agent has let them go so that they can be loaded on
// another connection at once.
func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) {
	c := h.connOf(w, r)
	if c == nil {
		return
	}
	c.close("the client deleted it")
	select {
	case <-c.done:
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusAccepted)
}

// lookup returns the open connection id, or nil.
func (h *Handler) lookup(id string) *httpConn {
	h.mu.Lock()
	c := h.conns[id]
	h.mu.Unlock()
	if c == nil || c.ended() {
		return nil
	}
	return c
}

// takeOver ends the connections other than c that hold session sid with
// no stream open — a client that went away and now reattaches the session
// here — and waits for them, so that the agent has released the session.
func (h *Handler) takeOver(r *http.Request, sid string, c *httpConn) {
	h.mu.Lock()
	var stale []*httpConn
	for _, d := range h.conns {
		if d != c && d.holdsDetached(sid) {
			stale = append(stale, d)
		}
	}
	h.mu.Unlock()
	if len(stale) == 0 {
		return
	}
	t := time.NewTimer(takeOverWait)
	defer t.Stop()
	for _, d := range stale {
		h.log.Info("ending a detached HTTP connection: its session is reattached elsewhere", "conn", d.id, "session", sid, "by", c.id)
		d.close("its session was reattached on another connection")
		select {
		case <-d.done:
		case <-t.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, p := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(p))
			if err == nil && mt == mimeEventStream {
				return true
			}
		}
	}
	return false
}

// connOf returns the connection a GET or DELETE names, or answers 400
// (no Acp-Connection-Id) or 404 (an unknown one) and returns nil.
func (h *Handler) connOf(w http.ResponseWriter, r *http.Request) *httpConn {
	connID := r.Header.Get(HeaderConnectionID)
	if connID == "" {
		textError(w, http.StatusBadRequest, "missing "+HeaderConnectionID)
		return nil
	}
	c := h.lookup(connID)
	if c == nil {
		textError(w, http.StatusNotFound, "unknown "+HeaderConnectionID)
	}
	return c
}
