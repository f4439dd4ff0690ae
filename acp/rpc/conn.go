// conn.go: the connection core shared by both sides — ordered dispatch,
// detach, $/cancel_request, outgoing calls and shutdown (design.md "Order").

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"
)

// ConnOptions configures a connection. The zero value is usable.
type ConnOptions struct {
	// Logger receives protocol warnings and handler failures; nil discards.
	Logger *slog.Logger
	// Limits bound what the connection may cost; zero fields take their
	// defaults.
	Limits Limits
	// RequireAuth makes the connection start untrusted: until the served
	// side calls Authenticated, lines are capped at
	// Limits.PreAuthMaxLineSize and the connection is closed after
	// Limits.HandshakeTimeout.
	RequireAuth bool
	// Peer names the other end in the logs of a hit limit; empty means
	// the remote address of a net.Conn, else "stdio".
	Peer string
}

// ExtHandler is optionally implemented by an [Agent] or [Client] to serve
// extension methods, whose names start with `_` (acp-v1 §22). Without it an
// extension request gets -32601 and an extension notification is ignored.
type ExtHandler interface {
	HandleExtRequest(ctx context.Context, method string, params json.RawMessage) (any, error)
	HandleExtNotification(ctx context.Context, method string, params json.RawMessage) error
}

// Detach tells the dispatcher of the request whose handler context is ctx to
// go on with the next message: the handler's reply comes later, when it
// returns. A handler runs synchronously until it returns or detaches, so
// messages after it (a session/cancel after a session/prompt) are only
// dispatched once it has done its cheap, order-sensitive prefix. Detach is
// a no-op for notification handlers, for initialize, and outside handlers.
func Detach(ctx context.Context) {
	if fl, ok := ctx.Value(handlerKey{}).(*inflight); ok {
		fl.detach()
	}
}

// AfterReply arranges for fn to run right after the successful result of
// the request whose handler context is ctx has been written, before the
// handler's goroutine ends. It lets a handler send notifications that
// must follow its answer (updates for a session whose id the result
// carries). fn does not run when the request is answered with an error.
// Outside a request handler, fn runs at once.
func AfterReply(ctx context.Context, fn func()) {
	afterRequest(ctx, fn, func(fl *inflight) *[]func() { return &fl.after })
}

// AfterAnswer arranges for fn to run right after the request whose
// handler context is ctx has been answered, with a result or an error.
// Outside a request handler, fn runs at once.
func AfterAnswer(ctx context.Context, fn func()) {
	afterRequest(ctx, fn, func(fl *inflight) *[]func() { return &fl.answered })
}

// afterRequest adds fn to the hooks hooks picks of the request whose
// handler context is ctx, or runs it at once outside a handler.
func afterRequest(ctx context.Context, fn func(), hooks func(*inflight) *[]func()) {
	if fl, ok := ctx.Value(handlerKey{}).(*inflight); ok {
		fl.c.mu.Lock()
		h := hooks(fl)
		*h = append(*h, fn)
		fl.c.mu.Unlock()
		return
	}
	fn()
}

// RequestIDFromContext returns the JSON-RPC id of the request whose handler
// context is ctx, e.g. for the request scope of elicitation/create.
func RequestIDFromContext(ctx context.Context) (acp.RequestID, bool) {
	if fl, ok := ctx.Value(handlerKey{}).(*inflight); ok {
		return fl.rid, true
	}
	return acp.RequestID{}, false
}

type handlerKey struct{}

// handlerFunc serves one method with raw params. It takes them by
// reference so that decoding can drop the last reference to a large line
// (*params = nil) before the handler runs on for a whole turn.
type handlerFunc func(ctx context.Context, params *json.RawMessage) (any, error)

// methodInfo is one row of a side's method table.
type methodInfo struct {
	notification   bool
	paramsOptional bool // omitted or null params mean {} (logout, session/list)
	handle         handlerFunc
}

// requestMethod builds the row of a request method from a typed handler:
// decode, validate, call, and send nil results as the empty response.
func requestMethod[P, R any](paramsOptional bool, fn func(context.Context, *P) (*R, error)) methodInfo {
	return methodInfo{paramsOptional: paramsOptional, handle: func(ctx context.Context, params *json.RawMessage) (any, error) {
		p, err := takeParams[P](params)
		if err != nil {
			return nil, err
		}
		r, err := fn(ctx, p)
		if err != nil {
			return nil, err
		}
		if r == nil {
			r = new(R)
		}
		return r, nil
	}}
}

// notificationMethod builds the row of a notification method.
func notificationMethod[P any](fn func(context.Context, *P) error) methodInfo {
	return methodInfo{notification: true, handle: func(ctx context.Context, params *json.RawMessage) (any, error) {
		p, err := takeParams[P](params)
		if err != nil {
			return nil, err
		}
		return nil, fn(ctx, p)
	}}
}

// takeParams decodes and validates a method's params into a new P; the
// caller's reference to their raw JSON is dropped, so the handler does not
// keep the line alive. The params are valid JSON: the Stream checked the
// line they came in, so they are not scanned for that again.
func takeParams[P any](params *json.RawMessage) (*P, error) {
	raw := *params
	*params = nil
	p := new(P)
	if err := acp.DecodeValidParams(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}

// item is one queued message.
type item struct {
	seq    uint64
	method string
	params json.RawMessage
	fl     *inflight // requests only
	cost   int       // what it counts against Limits.MaxQueuedInput
}

// inflight is an incoming request from arrival to answer.
type inflight struct {
	c       *conn
	id      json.RawMessage // exactly as received
	rid     acp.RequestID   // the id decoded
	key     string          // rid's canonical text, for $/cancel_request
	method  string
	ctx     context.Context
	cancel  context.CancelFunc
	replied sync.Once
	ok      bool // answered with a result; written before returned closes
	// after runs once the result is written (AfterReply); answered once
	// any answer is written (AfterAnswer).
	after    []func()
	answered []func()

	peerCancelled atomic.Bool // $/cancel_request arrived
	blocking      atomic.Bool // the dispatcher waits for this handler
	detachOnce    sync.Once
	detached      chan struct{}
	returned      chan struct{}
}

func (fl *inflight) detach() {
	if fl.method == acp.MethodInitialize {
		return
	}
	fl.detachOnce.Do(func() {
		fl.blocking.Store(false)
		close(fl.detached)
	})
}

// notifState marks the context of a notification handler, which always
// blocks the dispatcher.
type notifState struct{ c *conn }

type barrierWaiter struct {
	target uint64
	ch     chan struct{}
}

// noBarrier marks a call whose response has not arrived yet.
const noBarrier = ^uint64(0)

// conn is one connection, either side.
type conn struct {
	log     *slog.Logger
	stream  *Stream
	rpc     *jsonrpc2.Conn
	methods map[string]methodInfo
	ext     ExtHandler
	gate    bool // agent side: nothing but initialize before a successful initialize

	initialized atomic.Bool
	nextID      atomic.Uint64

	// ctx is the base of every handler context; the connection's one stored
	// context, cancelled at shutdown.
	ctx    context.Context
	cancel context.CancelFunc
	// notifCtx is the context of every notification handler: ctx marked
	// as the dispatcher's (see blocksDispatcher), made once.
	notifCtx context.Context

	mu        sync.Mutex
	queue     []*item // queue[head:] waits for the dispatcher
	head      int
	closing   bool
	inflight  map[string]*inflight
	seq       uint64            // seq of the last enqueued item
	lastNotif uint64            // seq of the last enqueued notification
	notifDone uint64            // seq of the last notification the dispatcher finished
	barriers  map[uint64]uint64 // our call id → lastNotif when its response arrived
	// results holds the result of a response to a call of ours, from its
	// arrival (takeResult) until the call takes it.
	results map[uint64]json.RawMessage
	waiters []*barrierWaiter

	wake chan struct{}
	wg   sync.WaitGroup // dispatcher and handler goroutines
	// jobs hands a request handler to a goroutine of an earlier one that
	// waits for work (see runHandler); idleHandlers counts those waiting.
	jobs         chan func()
	idleHandlers atomic.Int32
	shutdownOnce sync.Once

	guard guard // handshake deadline, idle timeout, failed authentications

	// At the end of input (drainAtEOF): inputEnded is set under mu, the
	// dispatcher closes drained once the queue is empty, and handlers
	// counts the running request handlers.
	inputEnded bool
	drained    chan struct{}
	drainOnce  sync.Once
	handlers   sync.WaitGroup
	done       chan struct{}
}

// startConn starts a connection serving methods (and impl's extension
// methods, when it is an ExtHandler) over rwc; gate is the agent side's
// rule that nothing but initialize is served before initialize succeeded.
func startConn(rwc io.ReadWriteCloser, methods map[string]methodInfo, impl any, gate bool, opts *ConnOptions) *conn {
	c := newConn(rwc, methods, impl, gate, opts)
	c.start()
	return c
}

// newConn builds a connection that reads nothing until start.
func newConn(rwc io.ReadWriteCloser, methods map[string]methodInfo, impl any, gate bool, opts *ConnOptions) *conn {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Peer == "" {
		o.Peer = PeerName(rwc)
	}
	o.Limits = o.Limits.withDefaults()
	c := &conn{
		log:      o.Logger,
		methods:  methods,
		inflight: make(map[string]*inflight),
		barriers: make(map[uint64]uint64),
		results:  make(map[uint64]json.RawMessage),
		wake:     make(chan struct{}, 1),
		jobs:     make(chan func()),
		done:     make(chan struct{}),
		gate:     gate,
	}
	c.ext, _ = impl.(ExtHandler)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.notifCtx = context.WithValue(c.ctx, handlerKey{}, &notifState{c: c})
	c.stream = NewStream(rwc, rwc, rwc, &StreamOptions{Limits: o.Limits, Peer: o.Peer, Logger: o.Logger})
	c.stream.onNotify = c.onNotify
	c.stream.onRequest = c.onRequest
	c.stream.onEOF = c.drainAtEOF
	c.stream.takeResult = c.takeResult
	c.drained = make(chan struct{})
	c.guard.init(c, rwc, &o)
	return c
}

// start begins reading.
func (c *conn) start() {
	// jsonrpc2 never sees a request (the stream hands those to our hooks),
	// so it needs no handler.
	c.rpc = jsonrpc2.NewConn(c.ctx, c.stream, nil,
		jsonrpc2.SetLogger(rpcLogger{c.stream}),
		jsonrpc2.OnRecv(c.onRecv))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.dispatch()
	}()
	go func() {
		<-c.rpc.DisconnectNotify()
		c.shutdown()
	}()
}

// drainAtEOF runs on the read loop when the peer's input ends: every
// message already read is still dispatched and answered, then the
// remaining handlers are cancelled (a running prompt answers cancelled)
// and awaited, and only then does the read loop report the end, which
// shuts the connection down.
func (c *conn) drainAtEOF() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.inputEnded = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	select {
	case <-c.drained:
	case <-c.ctx.Done():
	}
	c.cancel()
	c.handlers.Wait()
}

// rpcLogger sends jsonrpc2's own complaints (unmatched responses, protocol
// errors) to our logger instead of stderr, as bad input of the peer's:
// a peer decides how many of them there are.
type rpcLogger struct{ s *Stream }

// Printf implements jsonrpc2.Logger.
func (l rpcLogger) Printf(format string, v ...any) {
	l.s.badInput(hitUnmatchedResponse, "acp: "+strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// onNotify runs on the read loop for every notification, in order.
func (c *conn) onNotify(method string, params json.RawMessage) {
	c.guard.touch()
	if method == acp.MethodCancelRequest {
		c.cancelRequest(params)
		return
	}
	if _, known := c.methods[method]; !known && !strings.HasPrefix(method, "_") {
		c.log.Debug("acp: ignored notification", "method", method)
		return
	}
	c.enqueue(&item{method: method, params: params})
}

// cancelRequest applies $/cancel_request at once, even to a queued request.
func (c *conn) cancelRequest(params json.RawMessage) {
	var p acp.CancelRequestNotification
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.RequestID.IsZero() {
		c.log.Debug("acp: ignored malformed $/cancel_request")
		return
	}
	c.mu.Lock()
	fl := c.inflight[p.RequestID.String()]
	c.mu.Unlock()
	if fl == nil {
		c.log.Debug("acp: $/cancel_request for no pending request", "request_id", p.RequestID.String())
		return
	}
	fl.peerCancelled.Store(true)
	fl.cancel()
}

// onRequest runs on the read loop for every request, in order, and only
// enqueues: the handler runs on the dispatcher's turn.
func (c *conn) onRequest(id json.RawMessage, method string, params json.RawMessage) {
	c.guard.touch()
	var rid acp.RequestID
	if rid.UnmarshalJSON(id) != nil { // the stream only passes valid ids
		return
	}
	// The id lives until the answer; a slice of the line would keep a
	// large line alive for a whole turn.
	id = bytes.Clone(id)
	ctx, cancel := context.WithCancel(c.ctx)
	fl := &inflight{
		c: c, id: id, rid: rid, key: rid.String(), method: method, cancel: cancel,
		detached: make(chan struct{}), returned: make(chan struct{}),
	}
	fl.ctx = context.WithValue(ctx, handlerKey{}, fl)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return
	}
	c.inflight[fl.key] = fl
	c.mu.Unlock()
	c.enqueue(&item{method: method, params: params, fl: fl})
}

func (c *conn) enqueue(it *item) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.seq++
	it.seq = c.seq
	if it.fl == nil {
		c.lastNotif = it.seq
	}
	it.cost = len(it.params) + queuedMessageCost
	if it.fl != nil {
		// A request's id is kept twice until its answer: as sent and as
		// the key of the pending request.
		it.cost += len(it.fl.id) + len(it.fl.key)
	}
	c.queue = append(c.queue, it)
	c.mu.Unlock()
	c.stream.hold(it.cost)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// dispatch is the connection's one dispatcher: messages in arrival order.
func (c *conn) dispatch() {
	for {
		c.mu.Lock()
		for c.head == len(c.queue) && !c.closing {
			if c.inputEnded {
				c.drainOnce.Do(func() { close(c.drained) })
			}
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		if c.closing {
			c.mu.Unlock()
			return
		}
		it := c.pop()
		c.mu.Unlock()
		c.stream.hold(-it.cost)
		if it.fl == nil {
			c.runNotification(it)
		} else {
			c.runRequest(it)
		}
	}
}

// pop takes the first queued item; c.mu is held. The queue's array is
// used again from its start once it is empty, and moved down when most
// of it is behind the head, so a steady flow of messages does not
// allocate a new array as the queue moves along.
func (c *conn) pop() *item {
	it := c.queue[c.head]
	c.queue[c.head] = nil
	c.head++
	switch {
	case c.head == len(c.queue):
		c.queue, c.head = c.queue[:0], 0
	case c.head >= 64 && 2*c.head >= len(c.queue):
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
	return it
}

func (c *conn) runNotification(it *item) {
	defer c.notificationDone(it.seq)
	info, known := c.methods[it.method]
	var h handlerFunc
	switch {
	case c.gate && !c.initialized.Load():
		c.log.Debug("acp: notification before initialize ignored", "method", it.method)
		return
	case known && info.notification:
		h = info.handle
	case strings.HasPrefix(it.method, "_") && c.ext != nil:
		h = func(ctx context.Context, raw *json.RawMessage) (any, error) {
			return nil, c.ext.HandleExtNotification(ctx, it.method, *raw)
		}
	default:
		c.log.Debug("acp: ignored notification", "method", it.method)
		return
	}
	ctx := c.notifCtx
	params := it.params
	it.params = nil
	if _, err := c.invoke(ctx, it.method, h, &params); err != nil {
		// Nobody is answered, so the log is the only place it goes; once
		// a connection as a warning, as other bad input of the peer's.
		c.stream.badInput(hitFailedNotification, "acp: notification failed", "method", it.method, "err", err)
	}
}

func (c *conn) runRequest(it *item) {
	fl := it.fl
	if c.gate && !c.initialized.Load() && fl.method != acp.MethodInitialize {
		c.reply(fl, nil, acp.ErrInvalidRequest.WithData(reason("connection not initialized")))
		return
	}
	info, known := c.methods[fl.method]
	h := info.handle
	params := it.params
	it.params = nil // the handler's decoding is the last use of a large line
	switch {
	case known && !info.notification:
		if len(params) == 0 || isNull(params) {
			if !info.paramsOptional {
				c.reply(fl, nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "params", "reason": "required"}))
				return
			}
			params = json.RawMessage("{}")
		}
	case strings.HasPrefix(fl.method, "_") && c.ext != nil:
		h = func(ctx context.Context, raw *json.RawMessage) (any, error) {
			r, err := c.ext.HandleExtRequest(ctx, fl.method, *raw)
			if err == nil && r == nil {
				r = struct{}{}
			}
			return r, err
		}
	default:
		c.reply(fl, nil, acp.ErrMethodNotFound.WithData(map[string]any{"method": fl.method}))
		return
	}
	if fl.ctx.Err() != nil { // cancelled while queued
		c.reply(fl, nil, acp.ErrRequestCancelled)
		return
	}
	fl.blocking.Store(true)
	c.handlers.Add(1)
	c.runHandler(func() {
		defer c.handlers.Done()
		defer close(fl.returned)
		res, err := c.invoke(fl.ctx, fl.method, h, &params)
		fl.blocking.Store(false)
		c.reply(fl, res, err)
	})
	select {
	case <-fl.returned:
		if fl.method == acp.MethodInitialize && fl.ok {
			c.initialized.Store(true)
		}
	case <-fl.detached:
	case <-c.ctx.Done():
	}
}

// maxIdleHandlers is how many goroutines that ran a request handler a
// connection keeps waiting for the next one. A handler's goroutine has
// grown its stack by the time it returns (a prompt turn needs tens of
// KiB); the next request taking it over does not grow a fresh one again
// from the smallest size, copying the stack at each step.
const maxIdleHandlers = 4

// runHandler runs job on an idle handler goroutine, or on a new one when
// none waits. A goroutine ends when the connection shuts down, or after
// its job when maxIdleHandlers others already wait.
func (c *conn) runHandler(job func()) {
	select {
	case c.jobs <- job:
		return
	default:
	}
	c.wg.Add(1)
	go c.handlerLoop(job)
}

// handlerLoop runs job, then the jobs runHandler hands it, until the
// connection shuts down or enough other handler goroutines wait. While it
// waits it belongs to the connection, not to any session: tests that look
// for a session's goroutines ignore it by this name.
func (c *conn) handlerLoop(job func()) {
	defer c.wg.Done()
	for {
		job()
		if c.idleHandlers.Add(1) > maxIdleHandlers {
			c.idleHandlers.Add(-1)
			return
		}
		select {
		case job = <-c.jobs:
			c.idleHandlers.Add(-1)
		case <-c.ctx.Done():
			c.idleHandlers.Add(-1)
			return
		}
	}
}

// runHook runs an AfterReply or AfterAnswer hook; a panic is contained and
// logged like a handler's.
func (c *conn) runHook(method string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("acp: after-answer hook panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// invoke calls a handler, turning a panic into -32603.
func (c *conn) invoke(ctx context.Context, method string, h handlerFunc, params *json.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("acp: handler panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, acp.ErrInternal.WithData(reason("handler panicked"))
		}
	}()
	return h(ctx, params)
}

// reply answers a request exactly once. After $/cancel_request, an error
// answer becomes -32800 while a result still goes out.
func (c *conn) reply(fl *inflight, res any, err error) {
	fl.replied.Do(func() {
		c.mu.Lock()
		if c.inflight[fl.key] == fl {
			delete(c.inflight, fl.key)
		}
		c.mu.Unlock()
		var werr error
		if err == nil {
			fl.ok = true
			werr = c.stream.writeResponse(fl.id, res, nil)
		} else {
			if fl.peerCancelled.Load() {
				err = acp.ErrRequestCancelled
			}
			werr = c.stream.writeResponse(fl.id, nil, toWire(err, c.log))
		}
		if werr != nil && !errors.Is(werr, acp.ErrConnClosed) {
			// Most likely a result that does not marshal: still answer once.
			c.log.Warn("acp: cannot send response", "method", fl.method, "err", werr)
			fl.ok = false
			_ = c.stream.writeResponse(fl.id, nil, toWire(acp.ErrInternal.WithData(reason("unencodable result")), c.log))
		}
		fl.cancel()
		c.mu.Lock()
		after, answered := fl.after, fl.answered
		fl.after, fl.answered = nil, nil
		c.mu.Unlock()
		if fl.ok {
			for _, fn := range after {
				c.runHook(fl.method, fn)
			}
		}
		for _, fn := range answered {
			c.runHook(fl.method, fn)
		}
	})
}

func (c *conn) notificationDone(seq uint64) {
	c.mu.Lock()
	c.notifDone = seq
	if len(c.waiters) > 0 {
		kept := c.waiters[:0]
		for _, w := range c.waiters {
			if w.target <= seq {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		c.waiters = kept
	}
	c.mu.Unlock()
}

// onRecv runs on the read loop when a message arrives; for a response to one
// of our calls it records which notifications came before it.
func (c *conn) onRecv(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	c.guard.touch()
	if resp == nil || req == nil || resp.ID.IsString {
		return
	}
	c.mu.Lock()
	if _, ok := c.barriers[resp.ID.Num]; ok {
		c.barriers[resp.ID.Num] = c.lastNotif
	}
	c.mu.Unlock()
}

// takeResult runs on the read loop for the result of a response: it keeps
// the result of a pending call of ours for that call, and reports whether it
// did. (The result is a slice of the line it came in, which the line
// reader allocated for that line alone.)
func (c *conn) takeResult(id uint64, result json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, pending := c.barriers[id]; !pending {
		return false
	}
	c.results[id] = result
	return true
}

// awaitBarrier holds a call's return until every notification that arrived
// before its response has been handled, so a Prompt returns after all of
// the turn's session/update notifications were delivered. It does not wait
// when the caller is a handler the dispatcher is waiting for: that would
// deadlock.
func (c *conn) awaitBarrier(ctx context.Context, id uint64) {
	c.mu.Lock()
	target := c.barriers[id]
	delete(c.barriers, id)
	if target == noBarrier || target <= c.notifDone || c.closing || c.blocksDispatcher(ctx) {
		c.mu.Unlock()
		return
	}
	w := &barrierWaiter{target: target, ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	select {
	case <-w.ch:
	case <-ctx.Done():
	}
}

func (c *conn) blocksDispatcher(ctx context.Context) bool {
	switch st := ctx.Value(handlerKey{}).(type) {
	case *inflight:
		return st.c == c && st.blocking.Load()
	case *notifState:
		return st.c == c
	}
	return false
}

// call sends a request and decodes its result into result (a null result
// leaves it zero). When ctx ends first it sends $/cancel_request and returns
// ctx.Err(); a peer error is an *Error; a closed connection ErrConnClosed.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := c.nextID.Add(1) // our ids start at 1: never 0, never null
	c.guard.calls.Add(1)
	defer c.guard.calls.Add(-1)
	c.mu.Lock()
	c.barriers[id] = noBarrier
	c.mu.Unlock()
	w, err := c.rpc.DispatchCall(ctx, method, params, jsonrpc2.PickID(jsonrpc2.ID{Num: id}))
	if err != nil {
		c.dropBarrier(id)
		if errors.Is(err, jsonrpc2.ErrClosed) || errors.Is(err, acp.ErrConnClosed) {
			return acp.ErrConnClosed
		}
		return err
	}
	var raw json.RawMessage
	err = w.Wait(ctx, &raw)
	c.mu.Lock()
	if kept, ok := c.results[id]; ok {
		raw = kept
		delete(c.results, id)
	}
	c.mu.Unlock()
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		c.dropBarrier(id)
		c.mu.Lock()
		ended := c.inputEnded
		c.mu.Unlock()
		if ended {
			// The peer's input is gone: this call can never be answered,
			// and its context was cancelled for that reason.
			return acp.ErrConnClosed
		}
		cancel := &acp.CancelRequestNotification{RequestID: acp.IntRequestID(int64(id))}
		if werr := c.stream.WriteNotification(acp.MethodCancelRequest, cancel); werr != nil {
			c.log.Debug("acp: cannot send $/cancel_request", "err", werr)
		}
		return ctxErr
	}
	c.awaitBarrier(ctx, id)
	var we *jsonrpc2.Error
	switch {
	case errors.As(err, &we):
		return fromWire(we)
	case errors.Is(err, jsonrpc2.ErrClosed):
		return acp.ErrConnClosed
	case err != nil:
		return err
	}
	if result != nil && len(raw) > 0 && !isNull(raw) {
		if err := decodeResult(raw, result); err != nil {
			return fmt.Errorf("acp: %s: malformed result: %w", method, err)
		}
	}
	return nil
}

func (c *conn) dropBarrier(id uint64) {
	c.mu.Lock()
	delete(c.barriers, id)
	delete(c.results, id)
	c.mu.Unlock()
}

// decodeResult decodes a response's result, valid JSON (the Stream checked
// the line it came in): a result that decodes itself gets it without the
// validating scan json.Unmarshal makes first.
func decodeResult(raw json.RawMessage, result any) error {
	if u, ok := result.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(raw)
	}
	return json.Unmarshal(raw, result)
}

// callRaw is call for untyped (extension, relayed) methods.
func (c *conn) callRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	return raw, nil
}

// notify writes a notification through the stream's fast path, in call
// order.
func (c *conn) notify(method string, params any) error {
	return notifyErr(c.stream.WriteNotification(method, params))
}

// notifyErr is what a notification's write reports: acp.ErrConnClosed
// itself once the connection is closed, whatever error says so.
func notifyErr(err error) error {
	if errors.Is(err, acp.ErrConnClosed) {
		return acp.ErrConnClosed
	}
	return err
}

// shutdown runs once, when the peer goes away or Close is called: it
// cancels every handler context, fails pending calls (jsonrpc2 does) and
// waits for the dispatcher and every handler.
func (c *conn) shutdown() {
	c.shutdownOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.queue, c.head = nil, 0
		for _, w := range c.waiters {
			close(w.ch)
		}
		c.waiters = nil
		c.mu.Unlock()
		c.cancel()
		c.guard.stop()
		select {
		case c.wake <- struct{}{}:
		default:
		}
		_ = c.rpc.Close()
		// jsonrpc2 announces the disconnect before it closes the stream:
		// wait for that close, which writes what is still queued.
		_ = c.stream.Close()
		c.wg.Wait()
		close(c.done)
	})
}

// close closes the connection and waits until all its goroutines ended. It
// must not be called from a handler of this connection.
func (c *conn) close() error {
	_ = c.rpc.Close()
	<-c.done
	return nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }
