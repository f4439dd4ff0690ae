// stream.go: the newline-delimited JSON transport (acp-v1 §2.1, §3), a
// jsonrpc2.ObjectStream that hands jsonrpc2 only the responses to our calls.

package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// DefaultMaxLineSize is the default cap on one incoming line.
const DefaultMaxLineSize = 64 << 20

// StreamOptions configures a [Stream]. The zero value is usable.
type StreamOptions struct {
	// MaxLineSize caps one incoming line in bytes; 0 means
	// DefaultMaxLineSize. A longer line is skipped without being buffered
	// whole and answered with -32600.
	MaxLineSize int
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
// Writes are serialized, one line per message, and flushed when no other
// writer is queued, so a burst costs few syscalls and the last line of a
// burst is never held back. A write error closes the stream.
type Stream struct {
	r       *bufio.Reader
	maxLine int
	log     *slog.Logger
	closer  io.Closer

	waiting atomic.Int32 // writers queued on wmu; the last one flushes
	wmu     sync.Mutex
	bw      *bufio.Writer
	werr    error // sticky write error, under wmu

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// onNotify and onRequest receive every valid notification and request,
	// on the reading goroutine and in arrival order; id is the request's
	// original id, exactly as received, and writeResponse answers it. By
	// default a request is answered -32601 and a notification ignored.
	onNotify  func(method string, params json.RawMessage)
	onRequest func(id json.RawMessage, method string, params json.RawMessage)
	// onEOF, when set, runs when the input ends, before ReadObject reports
	// it; the writing side stays open while it runs, so a connection can
	// still answer what it already read.
	onEOF func()
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream returns a Stream reading r and writing w; Close closes closer
// (which may be nil) and should unblock a pending read.
func NewStream(r io.Reader, w io.Writer, closer io.Closer, opts *StreamOptions) *Stream {
	var o StreamOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLineSize <= 0 {
		o.MaxLineSize = DefaultMaxLineSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stream{
		r:        bufio.NewReaderSize(r, 16<<10),
		bw:       bufio.NewWriterSize(w, 16<<10),
		maxLine:  o.MaxLineSize,
		log:      o.Logger,
		closer:   closer,
		onNotify: func(string, json.RawMessage) {},
	}
	s.onRequest = func(id json.RawMessage, method string, _ json.RawMessage) {
		s.replyError(id, acp.ErrMethodNotFound.WithData(map[string]any{"method": method}))
	}
	return s
}

// Close closes the stream; it is idempotent and returns the first result.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		// Flush what an earlier writer left for a queued one, unless a
		// writer is stuck: then closing the peer is what unblocks it.
		if s.wmu.TryLock() {
			if s.werr == nil {
				_ = s.bw.Flush()
				s.werr = acp.ErrConnClosed
			}
			s.wmu.Unlock()
		}
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}

// WriteObject implements jsonrpc2.ObjectStream; jsonrpc2 writes our
// outgoing calls through it.
func (s *Stream) WriteObject(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeLine(append(b, '\n'))
}

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
	return s.writeNotificationTail(e, b)
}

// WriteNotificationRaw writes the notification {method, params} where
// params is already-encoded, compact JSON (from MarshalSessionNotification);
// it is written as is.
func (s *Stream) WriteNotificationRaw(method string, params []byte) error {
	e := notifPool.Get().(*pooledEncoder)
	defer putNotifEncoder(e)
	b := appendNotificationHead(e.buf.AvailableBuffer()[:0], method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return s.writeNotificationTail(e, b)
}

// appendNotificationHead appends the start of a notification line, up to and
// including its method.
func appendNotificationHead(b []byte, method string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	return jsontext.AppendString(b, method)
}

// writeNotificationTail closes and writes the notification line b, built in
// e's buffer, and keeps b's array in e when it outgrew the buffer, for the
// next call.
func (s *Stream) writeNotificationTail(e *pooledEncoder, b []byte) error {
	b = append(b, '}', '\n')
	err := s.writeLine(b)
	e.buf.Reset()
	if cap(b) > e.buf.Cap() {
		e.buf = *bytes.NewBuffer(b[:0])
	}
	return err
}

// putNotifEncoder returns e to notifPool unless its buffer grew too large to
// keep.
func putNotifEncoder(e *pooledEncoder) {
	if e.buf.Cap() <= 1<<20 {
		notifPool.Put(e)
	}
}

// writeLine writes one complete line (ending in '\n') under the write lock.
func (s *Stream) writeLine(line []byte) error {
	s.waiting.Add(1)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	queued := s.waiting.Add(-1)
	if s.werr != nil {
		return s.werr
	}
	if s.closed.Load() {
		return acp.ErrConnClosed
	}
	_, err := s.bw.Write(line)
	if err == nil && queued == 0 {
		err = s.bw.Flush()
	}
	if err != nil {
		s.werr = fmt.Errorf("%w: %w", acp.ErrConnClosed, err)
		s.Close() // its TryLock fails while we hold wmu, so it only closes
		return s.werr
	}
	return nil
}

// ReadObject implements jsonrpc2.ObjectStream. It returns only at the end of
// input (or on a read error) or with one clean message decoded into v.
func (s *Stream) ReadObject(v any) error {
	for {
		line, tooLong, rerr := s.readLine()
		if tooLong {
			s.log.Warn("acp: input line too long", "limit", s.maxLine)
			s.replyError(nil, acp.ErrInvalidRequest.WithData(map[string]any{
				"reason": fmt.Sprintf("line exceeds the limit of %d bytes", s.maxLine)}))
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

// readLine returns the next line without its terminator. A line over the
// limit is consumed without keeping it and reported as tooLong.
func (s *Stream) readLine() (line []byte, tooLong bool, err error) {
	for {
		frag, e := s.r.ReadSlice('\n')
		if !tooLong {
			n := len(line) + len(frag)
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				n--
			}
			if n > s.maxLine+1 { // +1: a '\r' before the '\n'
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, e
	}
}

// envelope holds the raw members of a message.
type envelope struct {
	jsonrpc, id, method, params, result, errObj []byte
}

func reason(r string) map[string]any { return map[string]any{"reason": r} }

// process checks one line. It returns the response for jsonrpc2, or nil
// when the line was answered, delivered to a hook, or dropped.
func (s *Stream) process(line []byte) []byte {
	if !json.Valid(line) {
		s.log.Warn("acp: unparseable input line", "line", jsontext.Truncate(line, 200))
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
	_ = jsontext.ScanObject(line, func(k, v []byte) bool {
		switch {
		case jsontext.KeyIs(k, "jsonrpc"):
			env.jsonrpc = v
		case jsontext.KeyIs(k, "id"):
			env.id = v
		case jsontext.KeyIs(k, "method"):
			env.method = v
		case jsontext.KeyIs(k, "params"):
			env.params = v
		case jsontext.KeyIs(k, "result"):
			env.result = v
		case jsontext.KeyIs(k, "error"):
			env.errObj = v
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
			s.log.Warn("acp: dropped response with invalid UTF-8")
			return nil
		}
		s.replyError(echo, acp.ErrInvalidRequest.WithData(reason("message is not valid UTF-8")))
		return nil
	}
	version, _ := jsontext.String(env.jsonrpc)
	if isRequest {
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
	switch {
	case id == nil || string(id) == "null":
		// A peer's answer to a line it could not read; it matches nothing we
		// sent (our ids start at 1) and jsonrpc2 would take it for id 0.
		s.log.Warn("acp: dropped response with null id", "error", jsontext.Truncate(env.errObj, 200))
		return nil
	case id[0] == '"':
	case jsontext.IsInteger(id) && id[0] != '-':
		if _, err := strconv.ParseUint(string(id), 10, 64); err != nil {
			s.log.Warn("acp: dropped response with foreign id", "id", string(id))
			return nil
		}
	default:
		s.log.Warn("acp: dropped response with foreign id", "id", jsontext.Truncate(id, 40))
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
		s.log.Warn("acp: malformed response", "id", string(id))
		b = append(b, `,"error":{"code":-32603,"message":"Internal error","data":"malformed response from peer"}}`...)
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
	b := make([]byte, 0, len(body)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if e == nil {
		b = append(b, `,"result":`...)
	} else {
		b = append(b, `,"error":`...)
	}
	b = append(b, body...)
	b = append(b, '}', '\n')
	return s.writeLine(b)
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
	if err := s.writeLine(b); err != nil {
		s.log.Debug("acp: cannot answer bad input", "err", err)
	}
}
