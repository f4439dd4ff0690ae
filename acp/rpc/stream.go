// stream.go: the newline-delimited JSON transport (acp-v1 §2.1, §3), a
// jsonrpc2.ObjectStream that hands jsonrpc2 only the responses to our calls.

package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/internal/jsontext"
)

// StreamOptions configures a [Stream]. The zero value is usable.
type StreamOptions struct {
	// Limits bound the stream's queues and lines; zero fields take their
	// defaults. The Stream applies MaxLineSize, MaxQueuedInput,
	// MaxQueuedOutput and WriteTimeout.
	Limits Limits
	// Peer names the other end in the logs of a hit limit ("tcp
	// 127.0.0.1:5123", "stdio").
	Peer string
	// Logger receives dropped and malformed input; nil discards.
	Logger *slog.Logger
}

// Stream is a jsonrpc2.ObjectStream over newline-delimited JSON: one compact
// message per line, `\r\n` tolerated, blank lines skipped.
//
// Every line is checked here, once. Requests and notifications go to the
// connection's hooks, on the reading goroutine and in arrival order, with
// their params and id exactly as received; ReadObject hands jsonrpc2 only
// clean responses to our own calls, because jsonrpc2.Conn closes the whole
// connection on any read error. Every bad line is answered here (-32700 for
// non-JSON, -32600 for batches, non-objects, invalid envelopes, invalid
// UTF-8 and over-long lines) and reading goes on. Responses with a null or
// foreign id are logged and dropped.
//
// Output goes through a bounded queue and one writer goroutine, so a burst
// leaves in few writes and a peer that does not read costs at most
// MaxQueuedOutput. While the output queue is full, or MaxQueuedInput bytes
// of read messages wait for the dispatcher, the stream reads nothing more
// (backpressure); a peer that takes none of our output for WriteTimeout is
// disconnected. A write error closes the stream.
type Stream struct {
	r      *bufio.Reader
	log    *slog.Logger
	peer   string
	names  Settings // of the limits, for the logs of their hits
	closer io.Closer
	out    *outbox

	maxLine atomic.Int64
	// preAuth is set while the peer has yet to authenticate: an over-long
	// line then ends the connection instead of being skipped.
	preAuth atomic.Bool
	maxIn   int64
	inHeld  atomic.Int64  // bytes of read messages the connection holds
	wake    chan struct{} // a paused reader looks again
	closed  chan struct{}
	hits    atomic.Uint32 // limits already logged, one bit each

	// preAuthLogged, set by distrust, reports whether a line over the
	// limit before authentication is to be logged: the first of the
	// transport's episode (see guard).
	preAuthLogged func() bool

	closeOnce  sync.Once
	closerOnce sync.Once
	closeErr   error
	// aborted is set once we closed the connection under the reader (a
	// stall, a failed write, a limit): its read error is then ours, not
	// the peer's, and what it read last is not a message.
	aborted atomic.Bool

	// onNotify and onRequest receive every valid notification and request,
	// on the reading goroutine and in arrival order; id is the request's
	// original id, exactly as received, and writeResponse answers it. By
	// default a request is answered -32601 and a notification ignored. A
	// hook that keeps a message counts it with hold until it is handled.
	onNotify  func(method string, params json.RawMessage)
	onRequest func(id json.RawMessage, method string, params json.RawMessage)
	// onEOF, when set, runs when the input ends, before ReadObject reports
	// it; the writing side stays open while it runs, so a connection can
	// still answer what it already read.
	onEOF func()
	// takeResult, when set, is offered the result of every well-formed
	// response with an integer id, on the reading goroutine. When it keeps
	// it (a call of ours waits for it), jsonrpc2 gets the response with a
	// null result instead: jsonrpc2 decodes a response's result twice, once
	// into a generic value, only to pass it on as raw JSON.
	takeResult func(id uint64, result json.RawMessage) bool
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream returns a Stream reading r and writing w; Close closes closer
// (which may be nil) and should unblock a pending read. Closing the stream
// first writes what is queued, for as long as the peer takes it.
func NewStream(r io.Reader, w io.Writer, closer io.Closer, opts *StreamOptions) *Stream {
	var o StreamOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lim := o.Limits.withDefaults()
	s := &Stream{
		r:        bufio.NewReaderSize(r, 16<<10),
		log:      o.Logger,
		peer:     o.Peer,
		names:    lim.Settings,
		closer:   closer,
		maxIn:    int64(lim.MaxQueuedInput),
		wake:     make(chan struct{}, 1),
		closed:   make(chan struct{}),
		onNotify: func(string, json.RawMessage) {},
	}
	s.maxLine.Store(int64(lim.MaxLineSize))
	s.onRequest = func(id json.RawMessage, method string, _ json.RawMessage) {
		s.replyError(id, acp.ErrMethodNotFound.WithData(map[string]any{"method": method}))
	}
	stall := lim.WriteTimeout
	if stall < 0 {
		stall = 0
	}
	s.out = newOutbox(w, lim.MaxQueuedOutput, stall,
		func(err error) { s.broken(err, stall) }, s.resume)
	return s
}

// Limits hit, logged once per stream (a line over the limit before
// authentication also once per episode of the transport's: see distrust).
const (
	hitOutputFull uint32 = 1 << iota
	hitInputFull
	hitLongLine
	hitPreAuthLine
	hitStalled
	// Kinds of bad input, warned of once per stream (see badInput).
	hitUnparseable
	hitBadUTF8Response
	hitNullIDResponse
	hitForeignIDResponse
	hitMalformedResponse
	hitUnmatchedResponse
	// A notification that failed (params that do not decode): it has
	// no answer to carry the error, and the peer decides how many come.
	hitFailedNotification
)

// badInput logs bad input from the peer: a warning the first time each
// kind comes on the stream, then debug lines, so that a peer's garbage
// costs a line of log, not a line per line it sends.
func (s *Stream) badInput(bit uint32, msg string, args ...any) {
	args = append([]any{"peer", s.peer}, args...)
	if s.hits.Or(bit)&bit == 0 {
		s.log.Warn(msg+" (more of this kind from the peer are logged at debug level)", args...)
		return
	}
	s.log.Debug(msg, args...)
}

// limitHit logs msg the first time the limit bit is hit.
func (s *Stream) limitHit(bit uint32, msg string, args ...any) {
	if s.hits.Or(bit)&bit == 0 {
		s.log.Warn(msg, append([]any{"peer", s.peer}, args...)...)
	}
}

// hold counts n bytes of read messages the connection keeps (n < 0 gives
// them back); reading pauses while they exceed MaxQueuedInput.
func (s *Stream) hold(n int) {
	if s.inHeld.Add(int64(n)) < s.maxIn && n < 0 {
		s.resume()
	}
}

// resume wakes a reader paused by backpressure.
func (s *Stream) resume() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// awaitRoom blocks while the output queue is full or too much input waits,
// so a peer that floods us without reading stalls on its own sends.
func (s *Stream) awaitRoom() error {
	for {
		outFull := s.out.congested()
		inFull := s.inHeld.Load() >= s.maxIn
		switch {
		case outFull:
			s.limitHit(hitOutputFull, "acp: the peer is not reading its answers; pausing its input", "setting", s.names.MaxQueuedOutput)
		case inFull:
			s.limitHit(hitInputFull, "acp: the peer sends faster than its requests are handled; pausing its input", "setting", s.names.MaxQueuedInput)
		default:
			return nil
		}
		select {
		case <-s.wake:
		case <-s.closed:
			return acp.ErrConnClosed
		case <-s.out.failed: // the peer is gone or stalled
			return io.ErrUnexpectedEOF
		}
	}
}

// trust lifts the pre-authentication line limit to maxLine.
func (s *Stream) trust(maxLine int) {
	s.maxLine.Store(int64(maxLine))
	s.preAuth.Store(false)
}

// distrust applies the pre-authentication line limit until trust;
// logged says whether a line over it is to be logged. It is called
// before the stream is read.
func (s *Stream) distrust(maxLine int, logged func() bool) {
	s.preAuthLogged = logged
	s.preAuth.Store(true)
	s.maxLine.Store(int64(maxLine))
}

// Close writes what is queued, as far as the peer takes it within
// WriteTimeout, then closes the closer; it is idempotent and returns the
// first result.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.out.close(acp.ErrConnClosed)
		s.closeErr = s.closeCloser()
	})
	return s.closeErr
}

func (s *Stream) closeCloser() error {
	var err error
	s.aborted.Store(true)
	s.closerOnce.Do(func() {
		if s.closer != nil {
			err = s.closer.Close()
		}
	})
	return err
}

// broken handles a failed or stalled write: the peer is gone or does not
// read, so the connection ends at once, dropping what is queued.
func (s *Stream) broken(err error, stall time.Duration) {
	if errors.Is(err, errStalled) {
		s.limitHit(hitStalled, "acp: closing the connection: the peer has not read for the write timeout", "setting", s.names.WriteTimeout, "timeout", stall)
	}
	_ = s.closeCloser()
}

// WriteObject implements jsonrpc2.ObjectStream; jsonrpc2 writes our
// outgoing calls through it. Its messages marshal themselves with
// json.Marshal, whose output is compact, valid and HTML-escaped already:
// marshalling them again would only check and copy it, a 50 MiB prompt
// included.
func (s *Stream) WriteObject(obj any) error {
	var b []byte
	var err error
	if m, ok := obj.(json.Marshaler); ok {
		b, err = m.MarshalJSON()
	} else {
		b, err = json.Marshal(obj)
	}
	if err != nil {
		return err
	}
	return s.out.put(nil, b, newline, true)
}

var newline = []byte{'\n'}

// pooledEncoder is a reusable line buffer with an encoder that does not
// escape HTML, as acp.MarshalSessionNotification does not.
type pooledEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var notifPool = sync.Pool{New: func() any { return new(pooledEncoder) }}

// WriteNotification writes the notification {method, params} with a single
// encoding of params; it is the fast path for session/update, and a streamed
// text chunk is encoded without reflection. params nil omits the member.
func (s *Stream) WriteNotification(method string, params any) error {
	e := notifPool.Get().(*pooledEncoder)
	defer putNotifEncoder(e)
	b := appendNotificationHead(e.buf.AvailableBuffer()[:0], method)
	if params != nil {
		b = append(b, `,"params":`...)
		if n, ok := params.(*acp.SessionNotification); ok {
			var err error
			if b, err = acp.AppendSessionNotification(b, n); err != nil {
				return err
			}
		} else {
			if e.enc == nil {
				e.enc = json.NewEncoder(&e.buf)
				e.enc.SetEscapeHTML(false)
			}
			e.buf.Reset()
			e.buf.Write(b)
			if err := e.enc.Encode(params); err != nil {
				return err
			}
			b = e.buf.Bytes()
			b = b[:len(b)-1] // Encode's newline
		}
	}
	b = append(b, '}', '\n')
	err := s.out.put(nil, b, nil, false)
	e.buf.Reset()
	if cap(b) > e.buf.Cap() {
		e.buf = *bytes.NewBuffer(b[:0])
	}
	return err
}

// WriteNotificationRaw writes the notification {method, params} where
// params is already-encoded, compact JSON (from MarshalSessionNotification);
// it is written as is, without a copy when large, so the caller must not
// change params afterwards.
func (s *Stream) WriteNotificationRaw(method string, params []byte) error {
	var head [64]byte
	b := appendNotificationHead(head[:0], method)
	b = append(b, `,"params":`...)
	return s.out.put(b, params, notificationTail, true)
}

// notificationTail ends a notification or response line.
var notificationTail = []byte("}\n")

// appendNotificationHead appends the start of a notification line, up to and
// including its method.
func appendNotificationHead(b []byte, method string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	return jsontext.AppendString(b, method)
}

// putNotifEncoder returns e to notifPool unless its buffer grew too large to
// keep.
func putNotifEncoder(e *pooledEncoder) {
	if e.buf.Cap() <= 1<<20 {
		notifPool.Put(e)
	}
}

// errLineOverPreAuthLimit ends the input of a peer that sent an over-long
// line before authenticating.
var errLineOverPreAuthLimit = errors.New("acp: line over the pre-authentication limit")

// ReadObject implements jsonrpc2.ObjectStream. It returns only at the end of
// input (or on a read error) or with one clean message decoded into v.
func (s *Stream) ReadObject(v any) error {
	for {
		if err := s.awaitRoom(); err != nil {
			return err
		}
		limit := s.maxLine.Load()
		line, tooLong, rerr := s.readLine(int(limit), s.preAuth.Load())
		if rerr != nil && s.aborted.Load() {
			return io.ErrUnexpectedEOF // jsonrpc2 ends quietly
		}
		if tooLong {
			reply := acp.ErrInvalidRequest.WithData(map[string]any{
				"reason": fmt.Sprintf("line exceeds the limit of %d bytes", limit)})
			if s.preAuth.Load() {
				if s.preAuthLogged() {
					s.limitHit(hitPreAuthLine, "acp: closing the connection: a line over the limit before authentication", "setting", s.names.PreAuthMaxLineSize, "limit", limit)
				}
				s.replyError(nil, reply)
				return errLineOverPreAuthLimit
			}
			s.limitHit(hitLongLine, "acp: input line too long; skipped", "setting", s.names.MaxLineSize, "limit", limit)
			s.replyError(nil, reply)
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if resp := s.process(line); resp != nil {
				// resp is a response we built; the envelope check makes
				// it readable (see FuzzStreamRead).
				return json.Unmarshal(resp, v)
			}
		}
		if rerr != nil {
			if rerr == io.EOF && s.onEOF != nil {
				s.onEOF()
			}
			return rerr
		}
	}
}

// readLine returns the next line without its terminator, in a buffer of
// its own of exactly its size. Fragments are gathered in chunks and copied
// once, so a large line costs about twice its size while it is read, not
// the repeated growth of one buffer. A line over limit is consumed without
// keeping it and reported as tooLong; with early, it is reported as soon
// as it is over, without waiting for its end.
func (s *Stream) readLine(limit int, early bool) (line []byte, tooLong bool, err error) {
	var chunks [][]byte
	n := 0
	for {
		frag, e := s.r.ReadSlice('\n')
		if !tooLong {
			k := n + len(frag)
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				k--
			}
			if k > limit+1 { // +1: a '\r' before the '\n'
				tooLong, chunks = true, nil
				if early {
					return nil, true, nil
				}
			} else {
				chunks = appendFragment(chunks, frag, n)
				n += len(frag)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, e
		}
		return joinChunks(chunks, n), false, e
	}
}

// appendFragment copies frag (which the bufio.Reader reuses) into the last
// chunk, or into a new one sized to the line so far (at most 4 MiB).
func appendFragment(chunks [][]byte, frag []byte, sofar int) [][]byte {
	for len(frag) > 0 {
		if len(chunks) == 0 || len(chunks[len(chunks)-1]) == cap(chunks[len(chunks)-1]) {
			size := min(max(sofar, len(frag)), 4<<20)
			chunks = append(chunks, make([]byte, 0, size))
		}
		last := &chunks[len(chunks)-1]
		m := copy((*last)[len(*last):cap(*last)], frag)
		*last = (*last)[:len(*last)+m]
		frag = frag[m:]
		sofar += m
	}
	return chunks
}

// joinChunks returns the n bytes of chunks as one slice: the only chunk
// when it is exactly full, else a fresh copy.
func joinChunks(chunks [][]byte, n int) []byte {
	if len(chunks) == 1 && len(chunks[0]) == cap(chunks[0]) {
		return chunks[0]
	}
	line := make([]byte, 0, n)
	for _, c := range chunks {
		line = append(line, c...)
	}
	return line
}

// detachParamsAt is how many bytes of a line besides its params make a
// request's params be copied out of it (see process).
const detachParamsAt = 4 << 10

// envelope holds the raw members of a message.
type envelope struct {
	jsonrpc, id, method, params, result, errObj []byte
}

func reason(r string) map[string]any { return map[string]any{"reason": r} }

// process checks one line. It returns the response for jsonrpc2, or nil
// when the line was answered, delivered to a hook, or dropped.
func (s *Stream) process(line []byte) []byte {
	if !json.Valid(line) {
		s.badInput(hitUnparseable, "acp: unparseable input line", "line", jsontext.Truncate(line, 200))
		s.replyError(nil, acp.ErrParse)
		return nil
	}
	switch line[0] {
	case '{':
	case '[':
		s.replyError(nil, acp.ErrInvalidRequest.WithData(reason("batches are not supported")))
		return nil
	default:
		s.replyError(nil, acp.ErrInvalidRequest.WithData(reason("message must be a JSON object")))
		return nil
	}
	var env envelope
	members := [...]struct {
		key string
		v   *[]byte
	}{{"jsonrpc", &env.jsonrpc}, {"id", &env.id}, {"method", &env.method}, {"params", &env.params}, {"result", &env.result}, {"error", &env.errObj}}
	_ = jsontext.ScanObject(line, func(k, v []byte) bool {
		for _, m := range members {
			if jsontext.KeyIs(k, m.key) {
				*m.v = v
				break
			}
		}
		return true
	})
	// echo is the id an error answer may carry: a string or number, else null.
	var echo []byte
	if len(env.id) > 0 && (env.id[0] == '"' || env.id[0] == '-' || (env.id[0] >= '0' && env.id[0] <= '9')) && utf8.Valid(env.id) {
		echo = env.id
	}
	isRequest := env.method != nil
	if !utf8.Valid(line) {
		if !isRequest && (env.result != nil || env.errObj != nil) {
			s.badInput(hitBadUTF8Response, "acp: dropped response with invalid UTF-8")
			return nil
		}
		s.replyError(echo, acp.ErrInvalidRequest.WithData(reason("message is not valid UTF-8")))
		return nil
	}
	version, _ := jsontext.String(env.jsonrpc)
	if isRequest {
		// A queued request keeps its params until it is handled, and
		// counts their size against MaxQueuedInput (conn.enqueue). Params
		// that are a small part of a long line are copied, so that the
		// rest of the line (members nobody reads) is not kept uncounted.
		if len(line)-len(env.params) > detachParamsAt {
			env.params = bytes.Clone(env.params)
		}
		s.processRequest(&env, version, echo)
		return nil
	}
	if env.result != nil || env.errObj != nil {
		return s.processResponse(&env, version)
	}
	s.replyError(echo, acp.ErrInvalidRequest.WithData(reason("message is neither a request nor a response")))
	return nil
}

// processRequest checks a request or notification and hands it to its hook.
func (s *Stream) processRequest(env *envelope, version string, echo []byte) {
	method, ok := jsontext.String(env.method)
	invalid := func(r string) {
		s.replyError(echo, acp.ErrInvalidRequest.WithData(reason(r)))
	}
	switch {
	case !ok:
		invalid("method must be a string")
	case version != "2.0":
		invalid(`jsonrpc must be "2.0"`)
	case env.result != nil || env.errObj != nil:
		invalid("a request must not carry result or error")
	case env.params != nil && env.params[0] != '{' && env.params[0] != '[' && string(env.params) != "null":
		invalid("params must be an object or an array")
	case env.id == nil:
		s.onNotify(method, env.params)
	case env.id[0] != '"' && string(env.id) != "null" && !jsontext.IsInteger(env.id):
		invalid("id must be a string, an integer or null")
	default:
		s.onRequest(env.id, method, env.params)
	}
}

func (s *Stream) processResponse(env *envelope, version string) []byte {
	id := env.id
	var num uint64
	switch {
	case id == nil || string(id) == "null":
		// A peer's answer to a line it could not read; it matches nothing we
		// sent (our ids start at 1) and jsonrpc2 would take it for id 0.
		s.badInput(hitNullIDResponse, "acp: dropped response with null id", "error", jsontext.Truncate(env.errObj, 200))
		return nil
	case id[0] == '"':
	case jsontext.IsInteger(id) && id[0] != '-':
		var err error
		if num, err = strconv.ParseUint(string(id), 10, 64); err != nil {
			s.badInput(hitForeignIDResponse, "acp: dropped response with foreign id", "id", jsontext.Truncate(id, 40))
			return nil
		}
	default:
		s.badInput(hitForeignIDResponse, "acp: dropped response with foreign id", "id", jsontext.Truncate(id, 40))
		return nil
	}
	b := make([]byte, 0, len(id)+len(env.result)+len(env.errObj)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	var errShape struct {
		Code    *int64  `json:"code"`
		Message *string `json:"message"`
	}
	malformed := version != "2.0" || (env.result != nil && env.errObj != nil) ||
		(env.errObj != nil && (json.Unmarshal(env.errObj, &errShape) != nil || errShape.Code == nil || errShape.Message == nil))
	switch {
	case malformed:
		// Still answer the waiting caller, with an error of our own.
		s.badInput(hitMalformedResponse, "acp: malformed response", "id", jsontext.Truncate(id, 40))
		b = append(b, `,"error":{"code":-32603,"message":"Internal error","data":"malformed response from peer"}}`...)
	case env.result != nil && num != 0 && s.takeResult != nil && s.takeResult(num, env.result):
		b = append(b, `,"result":null}`...)
	case env.result != nil:
		b = append(b, `,"result":`...)
		b = append(b, env.result...)
		b = append(b, '}')
	default:
		b = append(b, `,"error":`...)
		b = append(b, env.errObj...)
		b = append(b, '}')
	}
	return b
}

// writeResponse writes the response to a request delivered to onRequest:
// result when e is nil, else the error. id is the original raw id.
func (s *Stream) writeResponse(id json.RawMessage, result any, e *jsonrpc2.Error) error {
	var body []byte
	var err error
	if e == nil {
		body, err = json.Marshal(result)
	} else {
		body, err = json.Marshal(e)
	}
	if err != nil {
		return err
	}
	var head [64]byte
	b := append(head[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if e == nil {
		b = append(b, `,"result":`...)
	} else {
		b = append(b, `,"error":`...)
	}
	return s.out.put(b, body, notificationTail, true)
}

// replyError answers a bad line; id nil means null.
func (s *Stream) replyError(id []byte, e *acp.Error) {
	body, err := json.Marshal(e)
	if err != nil {
		body = []byte(`{"code":-32603,"message":"Internal error"}`)
	}
	if id == nil {
		id = []byte("null")
	}
	b := make([]byte, 0, len(body)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, body...)
	b = append(b, '}', '\n')
	if err := s.out.put(nil, b, nil, false); err != nil {
		s.log.Debug("acp: cannot answer bad input", "err", err)
	}
}
