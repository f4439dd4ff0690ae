// httpconn.go: one Streamable HTTP connection — the agent's output routed
// to the connection-scoped or a session-scoped SSE stream in the order it
// was written, and the idle end of a connection nobody reads.

package remote

import (
	"context"
	"io"
	"net"
	"sort"
	"sync"
	"time"
)

// httpConn is one ACP connection over Streamable HTTP.
type httpConn struct {
	h      *Handler
	id     string
	in     *inPipe
	remote net.Addr
	// ctx is Serve's: close cancels it, so the agent ends the connection
	// (and cancels its turns) at once.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when Serve returned

	line []byte // the agent's unfinished output line; the writer's only

	// reading is held by the one POST whose body is being read and
	// queued: like a socket's lines, a connection's messages come in one
	// at a time, so its bodies cost at most one MaxMessageBytes in memory
	// beside the queue.
	reading chan struct{}

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	closed    bool
	streams   map[string]*mailbox // by session id; "" is the connection-scoped stream
	routes    map[string]string   // client request id → the stream its answer goes to
	asked     map[string]string   // our request id → the session its answer must name
	queued    int                 // bytes waiting in the streams
	seq       uint64              // messages queued in the streams so far
	last      *mailbox            // the stream that got the last of them
	lastPrev  uint64              // its prev (see queued)
	taken     uint64              // messages taken by readers so far
	receivers int                 // SSE streams open now
	touched   time.Time           // the last POST or stream change
	idle      *time.Timer
	initKey   string      // the initialize request's id, until answered
	initResp  chan []byte // receives the initialize answer
	// limits already logged for this connection
	loggedCap, loggedSize, loggedStall, loggedUnread, loggedCut, loggedSlow bool
}

// mailbox is one SSE stream's queue; at most one GET reads it at a time.
// A message stays in q until its reader has written and flushed it, so the
// head of q is the stream's oldest message not yet out.
type mailbox struct {
	sid    string // "" for the connection-scoped stream
	q      []queued
	leased bool
	opened bool // a reader has leased it before
	// awaited: the client named this session in a session/load or
	// session/resume, so it takes that answer to mean what the agent
	// sent for the session before it is in; until the stream is first
	// opened, it holds the others back (see holding).
	awaited bool
	// clear is the highest prev of this stream's messages found free to
	// go: every earlier message of the other streams was out by then.
	clear uint64
	// stalled is set when the reader took none of the stream's messages
	// for WriteTimeout while another stream waited on it, or when nobody
	// opened the stream within WriteTimeout of its first message while
	// another stream waited on it; the other streams stop waiting on it
	// until it takes some.
	stalled bool
	// unread is when the stream got its first message while nobody had
	// opened it yet: until somebody does, the others wait on it until
	// unread+WriteTimeout.
	unread time.Time
}

// queued is one message of the agent in a stream's queue. seq numbers the
// connection's messages in the order the agent wrote them; prev is the seq
// of the last message queued before this one on another stream (0: none).
// A message goes out only after every message of the other streams up to
// prev has: two SSE streams have no order between them, and a client takes
// the answer to session/load, sent on the connection stream, to mean that
// the replay the agent wrote before it on the session stream is in.
type queued struct {
	seq, prev uint64
	msg       []byte
}

func (h *Handler) newHTTPConn(remote net.Addr) *httpConn {
	ctx, cancel := context.WithCancel(h.ctx)
	return &httpConn{
		h: h, id: newID(), in: newInPipe(h.o.MaxQueuedInput), remote: remote,
		ctx: ctx, cancel: cancel, done: make(chan struct{}), reading: make(chan struct{}, 1),
		changed: make(chan struct{}),
		streams: map[string]*mailbox{"": {}},
		routes:  map[string]string{},
		asked:   map[string]string{},
		touched: time.Now(),
	}
}

func (c *httpConn) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// ensure returns the stream of session sid, creating it; mu is held.
func (c *httpConn) ensure(sid string) *mailbox {
	if mb := c.streams[sid]; mb != nil {
		return mb
	}
	if len(c.streams) > c.h.o.MaxStreams {
		if !c.loggedCap {
			c.loggedCap = true
			c.h.o.Observer.LimitHit("streams")
			c.h.log.Warn("a connection has too many session streams; further sessions use the connection stream", "conn", c.id, "setting", c.h.o.Settings.MaxStreams, "limit", c.h.o.MaxStreams, "peer", c.remote)
		}
		return c.streams[""]
	}
	mb := &mailbox{sid: sid}
	c.streams[sid] = mb
	return mb
}

// rwc is what the agent is served on.
type httpRWC struct{ c *httpConn }

func (r httpRWC) Read(p []byte) (int, error) { return r.c.in.Read(p) }

// Write takes the agent's output, cut at newlines into messages.
func (r httpRWC) Write(p []byte) (int, error) {
	return writeLines(&r.c.line, p, r.c.deliver)
}

func (r httpRWC) Close() error {
	r.c.close("the agent closed the connection")
	return nil
}

// deliver routes one message of the agent: a response to the stream its
// request named (the initialize answer to the waiting POST), a request or
// notification to its session's stream when the client has one, else to
// the connection-scoped stream. It waits while the connection holds
// MaxQueuedOutput bytes, and ends the connection when nobody takes any of
// them for WriteTimeout. The streams' readers keep the order across streams
// (see queued and pump); deliver only numbers the messages.
func (c *httpConn) deliver(msg []byte) error {
	env, err := parseEnvelope(msg)
	if err != nil {
		c.h.log.Debug("agent output is not a JSON object; sent on the connection stream", "conn", c.id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	target := ""
	switch {
	case env.isResponse():
		k := env.key()
		if c.initResp != nil && k == c.initKey {
			c.initResp <- msg
			c.initResp = nil
			return nil
		}
		target = c.routes[k]
		delete(c.routes, k)
		if env.resultSession != "" {
			// session/new (and fork): the client opens the session's
			// stream on reading this, and what the agent sends for the
			// session meanwhile waits there.
			c.ensure(env.resultSession)
		}
	case env.paramsSession != "":
		if c.streams[env.paramsSession] != nil {
			target = env.paramsSession
		}
		if env.isRequest() {
			c.asked[env.key()] = target
		}
	case env.isRequest():
		c.asked[env.key()] = ""
	}
	if err := c.waitRoom(len(msg)); err != nil {
		return err
	}
	mb := c.streams[target]
	if mb == nil {
		mb = c.streams[""]
	}
	if !mb.opened && len(mb.q) == 0 {
		mb.unread = time.Now()
	}
	c.seq++
	if c.last != mb {
		c.lastPrev = c.seq - 1
		c.last = mb
	}
	mb.q = append(mb.q, queued{seq: c.seq, prev: c.lastPrev, msg: msg})
	c.queued += len(msg)
	c.broadcast()
	return nil
}

// sendable returns how many of the first messages of mb may be written
// now: those whose predecessors on the other streams are out. When it
// stops short it also returns the stream holding a predecessor. A stream's
// prevs never decrease, so the messages still to check start at the first
// prev beyond clear (a binary search), and one check clears every message
// of that prev. mu is held.
func (c *httpConn) sendable(mb *mailbox) (int, *mailbox) {
	q := mb.q
	for {
		i := sort.Search(len(q), func(k int) bool { return q[k].prev > mb.clear })
		if i == len(q) {
			return len(q), nil
		}
		if o := c.holding(mb, q[i].prev); o != nil {
			return i, o
		}
		mb.clear = q[i].prev
	}
}

// holding returns a stream other than mb whose oldest message not yet out
// is numbered seq or lower, or nil. A stream the client awaits (it sent
// session/load or session/resume for it) and has not opened yet holds the
// others back too: a client's GET for the session's stream may come only
// after the agent handled the load (a GET that comes late, or a client
// that sends session/load first), and the client takes the load's answer
// to mean the replay is in. Any other stream without a reader holds
// nothing back: one made by session/new or fork has a client that may
// open it later or never, and one whose reader left has a client that
// chose to stop reading it. Nor does a stalled stream (its reader took
// nothing, or nobody opened it, for WriteTimeout), which bounds the wait
// of a client that opens the stream only once it has the answer, nor an
// unopened stream once the connection is closed, as nobody can open it.
// mu is held.
func (c *httpConn) holding(mb *mailbox, seq uint64) *mailbox {
	for _, o := range c.streams {
		if o != mb && !o.stalled && (o.leased || o.awaited && !o.opened && !c.closed) && len(o.q) > 0 && o.q[0].seq <= seq {
			return o
		}
	}
	return nil
}

// stall marks o stalled, which lets the streams waiting on it go: its
// reader took none of its output for WriteTimeout, or, unopened, nobody
// opened it within WriteTimeout of its first message. Each kind is
// logged once a connection; mu is held.
func (c *httpConn) stall(o *mailbox, unopened bool) {
	o.stalled = true
	c.h.o.Observer.LimitHit("write-timeout")
	logged, what := &c.loggedStall, "an SSE stream took none of its output in time"
	if unopened {
		logged, what = &c.loggedUnread, "an SSE stream with output waiting was not opened in time"
	}
	if !*logged {
		*logged = true
		c.h.log.Warn(what+"; the connection's other streams stop waiting for it", "conn", c.id, "session", o.sid, "setting", c.h.o.Settings.WriteTimeout, "timeout", c.h.o.WriteTimeout, "peer", c.remote)
	}
	c.broadcast()
}

// cut records that a write to mb's reader took the whole WriteTimeout,
// which ends that stream.
func (c *httpConn) cut(mb *mailbox) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.h.o.Observer.LimitHit("write-timeout")
	if !c.loggedCut {
		c.loggedCut = true
		c.h.log.Warn("ending an SSE stream: its reader took none of its output in time", "conn", c.id, "session", mb.sid, "setting", c.h.o.Settings.WriteTimeout, "timeout", c.h.o.WriteTimeout, "peer", c.remote)
	}
}

// waitRoom waits, with mu held, until n more bytes fit. Readers taking
// output restart the stall timer; a whole WriteTimeout without any ends
// the connection.
func (c *httpConn) waitRoom(n int) error {
	max := c.h.o.MaxQueuedOutput
	var timer *time.Timer
	var taken uint64
	for !c.closed && c.queued > 0 && c.queued+n > max {
		if timer == nil && c.h.o.WriteTimeout > 0 {
			timer = time.NewTimer(c.h.o.WriteTimeout)
			defer timer.Stop()
			taken = c.taken
		}
		ch := c.changed
		c.mu.Unlock()
		fired := false
		var stalled <-chan time.Time
		if timer != nil {
			stalled = timer.C
		}
		select {
		case <-ch:
		case <-stalled:
			fired = true
		}
		c.mu.Lock()
		switch {
		case c.taken != taken && timer != nil:
			taken = c.taken
			timer.Reset(c.h.o.WriteTimeout)
		case fired:
			c.h.o.Observer.LimitHit("write-timeout")
			c.h.log.Warn("ending an HTTP connection: its SSE readers took none of its output in time", "conn", c.id, "setting", c.h.o.Settings.WriteTimeout, "timeout", c.h.o.WriteTimeout, "queued", c.queued, "peer", c.remote)
			c.closeLocked()
		}
	}
	if c.closed {
		return net.ErrClosed
	}
	return nil
}

// beginRead takes the connection's one body slot, waiting while another
// POST's body is read or queued; it fails when ctx ends or the connection
// closes first. A nil error must be followed by endRead.
func (c *httpConn) beginRead(ctx context.Context) error {
	select {
	case c.reading <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return net.ErrClosed
	}
}

func (c *httpConn) endRead() { <-c.reading }

// firstHit reports whether the limit flag *logged was clear, setting it:
// each limit is logged once per connection.
func (c *httpConn) firstHit(logged *bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := !*logged
	*logged = true
	return first
}

// touch records client activity, which keeps a connection without
// streams alive for another DetachTimeout.
func (c *httpConn) touch() {
	c.mu.Lock()
	c.touched = time.Now()
	c.mu.Unlock()
}

// armIdle starts the detach timer; mu is held.
func (c *httpConn) armIdle() {
	if c.closed || c.receivers > 0 || c.h.o.DetachTimeout < 0 {
		return
	}
	c.touched = time.Now()
	if c.idle == nil {
		c.idle = time.AfterFunc(c.h.o.DetachTimeout, c.idleCheck)
		return
	}
	c.idle.Reset(c.h.o.DetachTimeout)
}

// idleCheck ends a connection that has had no stream open and no POST for
// DetachTimeout.
func (c *httpConn) idleCheck() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.receivers > 0 {
		return
	}
	if left := c.h.o.DetachTimeout - time.Since(c.touched); left > 0 {
		c.idle.Reset(left)
		return
	}
	c.h.log.Info("ending an HTTP connection: no SSE stream and no request", "conn", c.id, "setting", c.h.o.Settings.DetachTimeout, "after", c.h.o.DetachTimeout, "peer", c.remote)
	c.closeLocked()
}

// holdsDetached reports whether the connection has a stream for sid and no
// reader at all: a client that went away, whose sessions another
// connection may take over.
func (c *httpConn) holdsDetached(sid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && c.receivers == 0 && c.streams[sid] != nil
}

// close ends the connection: streams end, POSTs are refused, and the
// agent's context is cancelled.
func (c *httpConn) close(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.h.log.Debug("HTTP connection closed", "conn", c.id, "why", why)
	}
	c.closeLocked()
}

func (c *httpConn) closeLocked() {
	if c.closed {
		return
	}
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	c.broadcast()
	c.in.close()
	c.cancel()
}

// serve runs the agent on the connection until it ends, then forgets it.
func (c *httpConn) serve() {
	defer close(c.done)
	defer c.h.release()
	c.h.o.Observer.ConnOpened(TransportHTTP)
	defer c.h.o.Observer.ConnClosed(TransportHTTP)
	_ = c.h.o.Serve(c.ctx, &served{ReadWriteCloser: httpRWC{c}, remote: c.remote, authed: c.h.o.Token != ""})
	c.close("the agent ended the connection")
	c.h.mu.Lock()
	if c.h.conns[c.id] == c {
		delete(c.h.conns, c.id)
	}
	c.h.mu.Unlock()
}

// ended reports whether the connection is closed.
func (c *httpConn) ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

var _ io.ReadWriteCloser = httpRWC{}
