// httpclient.go: the client side of Streamable HTTP — each message written
// is POSTed, and what the agent sends arrives on the connection-scoped SSE
// stream and one session-scoped stream per session.

package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// reopenTries bounds how often a session stream that ended while its
// connection lives is opened again in a row.
const reopenTries = 3

// httpStream is a dialled Streamable HTTP connection.
type httpStream struct {
	url string
	hdr http.Header
	o   *DialOptions
	// ownClient says o.Client was made for this connection, so Close
	// closes its idle connections.
	ownClient bool
	// ctx ends every request of the connection; Close and a failure
	// cancel it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // SSE readers

	in        chan []byte   // messages for Read, each ending in a newline
	done      chan struct{} // closed when the connection ended and its readers are gone
	closing   chan struct{} // closed by Close: nobody reads any more
	closeOnce sync.Once
	cur       []byte // the rest of the message being read; Read's only

	line []byte // the unfinished line being written; the writer's only

	mu       sync.Mutex
	connID   string
	sessions map[string]*sessionStream
	answers  map[string]string // the agent's request id → its session
	err      error             // why the connection ended
	ended    bool
	readers  int  // SSE readers running
	finished bool // done is closed
	cut      *time.Timer
}

// endGrace is how long the streams of a connection that ended may take to
// deliver what the server sent last (a cancelled turn's answer on a session
// stream while the connection stream already closed) before they are cut.
const endGrace = 2 * time.Second

// sessionStream is one open (or opening) session-scoped SSE stream.
type sessionStream struct {
	ready chan struct{} // closed once the GET was answered
	err   error         // the GET's failure; set before ready is closed
}

func newHTTPStream(u string, hdr http.Header, o *DialOptions) *httpStream {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpStream{
		url: u, hdr: hdr, o: o, ctx: ctx, cancel: cancel,
		in: make(chan []byte, 64), done: make(chan struct{}), closing: make(chan struct{}),
		sessions: map[string]*sessionStream{}, answers: map[string]string{},
	}
}

// Read returns the agent's messages, one line each.
func (s *httpStream) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		select {
		case m := <-s.in:
			s.cur = m
		case <-s.done:
			select {
			case m := <-s.in:
				s.cur = m
			default:
				return 0, io.EOF
			}
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

// Write POSTs each complete line as one message, in order.
func (s *httpStream) Write(p []byte) (int, error) {
	return writeLines(&s.line, p, s.send)
}

// send POSTs one message: initialize first (its answer comes in the POST's
// body), then everything else with the connection's id, and the session's
// id for a session message, once that session's stream is open.
func (s *httpStream) send(msg []byte) error {
	env, err := parseEnvelope(msg)
	if err != nil {
		return fmt.Errorf("remote: not a JSON-RPC message: %w", err)
	}
	s.mu.Lock()
	connID, ended := s.connID, s.ended
	s.mu.Unlock()
	if ended {
		return s.endErr()
	}
	if connID == "" {
		return s.initialize(msg, env)
	}
	sid := ""
	switch {
	case env.hasMethod:
		sid = env.paramsSession
	case env.isResponse():
		s.mu.Lock()
		sid = s.answers[env.key()]
		delete(s.answers, env.key())
		s.mu.Unlock()
	}
	if sid != "" {
		if err := s.openSession(sid); err != nil {
			if env.isRequest() {
				s.answerError(env.id, err)
				return nil
			}
			return nil // its session is gone: nothing can take it
		}
	}
	resp, err := s.do(http.MethodPost, msg, connID, sid)
	if err != nil {
		s.fail(err)
		return err
	}
	drain(resp)
	switch st := resp.StatusCode; {
	case st == http.StatusAccepted || st == http.StatusOK:
		return nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden || st == http.StatusNotFound || st == http.StatusGone:
		err := &StatusError{URL: s.url, Status: st}
		s.fail(err)
		return err
	case env.isRequest():
		// Only this request failed; the connection lives on.
		s.answerError(env.id, &StatusError{URL: s.url, Status: st})
		return nil
	default:
		err := &StatusError{URL: s.url, Status: st}
		s.fail(err)
		return err
	}
}

// initialize opens the connection.
func (s *httpStream) initialize(msg []byte, env envelope) error {
	if env.method != methodInitialize || !env.isRequest() {
		return errors.New("remote: the first message over Streamable HTTP must be initialize")
	}
	resp, err := s.do(http.MethodPost, msg, "", "")
	if err != nil {
		s.fail(err)
		return err
	}
	if resp.StatusCode != http.StatusOK {
		err := statusError(s.url, resp)
		s.fail(err)
		return err
	}
	id := resp.Header.Get(HeaderConnectionID)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.o.MaxMessageBytes)+1))
	resp.Body.Close()
	switch {
	case err != nil:
	case id == "":
		err = fmt.Errorf("remote: %s answered initialize without %s", s.url, HeaderConnectionID)
	case len(body) > s.o.MaxMessageBytes:
		err = fmt.Errorf("remote: the initialize answer is larger than %d bytes", s.o.MaxMessageBytes)
	}
	if err != nil {
		s.fail(err)
		return err
	}
	s.mu.Lock()
	s.connID = id
	s.mu.Unlock()
	ready := make(chan error, 1)
	s.mu.Lock()
	s.startReader("", ready)
	s.mu.Unlock()
	if err := <-ready; err != nil {
		s.fail(err)
		return err
	}
	s.push(append(oneLine(bytes.TrimSpace(body)), '\n'))
	return nil
}

// openSession opens the session's stream unless it is open, and waits
// until it is.
func (s *httpStream) openSession(sid string) error {
	s.mu.Lock()
	ss := s.sessions[sid]
	if ss == nil {
		ss = &sessionStream{ready: make(chan struct{})}
		s.sessions[sid] = ss
		ready := make(chan error, 1)
		s.startReader(sid, ready)
		go func() {
			ss.err = <-ready
			if ss.err != nil {
				s.mu.Lock()
				if s.sessions[sid] == ss {
					delete(s.sessions, sid)
				}
				s.mu.Unlock()
			}
			close(ss.ready)
		}()
	}
	s.mu.Unlock()
	select {
	case <-ss.ready:
		return ss.err
	case <-s.done:
		return s.endErr()
	}
}

// startReader runs readStream on a goroutine the connection waits for;
// mu is held.
func (s *httpStream) startReader(sid string, ready chan<- error) {
	s.readers++
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			s.readers--
			s.mu.Unlock()
			s.finish()
		}()
		s.readStream(sid, ready)
	})
}

// readStream opens one SSE stream ("" is the connection's) and hands its
// messages to Read until it ends. ready receives the GET's outcome. The
// connection's stream ending ends the connection; a session's stream is
// opened again.
func (s *httpStream) readStream(sid string, ready chan<- error) {
	for try := 0; ; try++ {
		s.mu.Lock()
		connID := s.connID
		s.mu.Unlock()
		resp, err := s.do(http.MethodGet, nil, connID, sid)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = statusError(s.url, resp)
		}
		if ready != nil {
			ready <- err
			ready = nil
			if err != nil {
				return
			}
		} else if err != nil {
			s.fail(fmt.Errorf("remote: reopening the stream of session %s: %w", sid, err))
			return
		}
		if s.readEvents(resp.Body, sid) {
			try = 0
		}
		resp.Body.Close()
		if s.ctx.Err() != nil {
			return
		}
		if sid == "" {
			s.fail(fmt.Errorf("remote: %s closed the connection's stream", s.url))
			return
		}
		if try+1 >= reopenTries {
			s.fail(fmt.Errorf("remote: the stream of session %s keeps closing", sid))
			return
		}
		select {
		case <-time.After(time.Duration(try+1) * 100 * time.Millisecond):
		case <-s.ctx.Done():
			return
		}
	}
}

// readEvents reads SSE events until the body ends; it reports whether any
// message came.
func (s *httpStream) readEvents(body io.Reader, sid string) bool {
	br := bufio.NewReaderSize(body, 32<<10)
	var data []byte
	got := false
	for {
		line, err := readLine(br, s.o.MaxMessageBytes+16)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				s.fail(fmt.Errorf("remote: a message from %s is larger than %d bytes", s.url, s.o.MaxMessageBytes))
			}
			return got
		}
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				got = true
				if !s.received(data, sid) {
					return got
				}
				data = nil
			}
		case line[0] == ':':
			// a keepalive comment
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if data != nil {
				data = append(data, ' ')
			}
			data = append(data, v...)
		}
	}
}

// received hands one message to Read. A session id in an answer (session/
// new) opens that session's stream; a request of the agent on a session's
// stream is answered with that session's header.
func (s *httpStream) received(data []byte, sid string) bool {
	data = oneLine(data)
	if env, err := parseEnvelope(data); err == nil {
		switch {
		case env.isResponse() && env.resultSession != "":
			go func() { _ = s.openSession(env.resultSession) }()
		case env.isRequest() && sid != "":
			s.mu.Lock()
			s.answers[env.key()] = sid
			s.mu.Unlock()
		}
	}
	return s.push(append(data, '\n'))
}

func (s *httpStream) push(m []byte) bool {
	select {
	case s.in <- m:
		return true
	case <-s.closing:
		return false
	}
}

// answerError hands Read an error answer to a request that could not be
// delivered.
func (s *httpStream) answerError(id []byte, err error) {
	msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%q}}`+"\n", id, err.Error())
	s.push(msg)
}

// do sends one request of the connection.
func (s *httpStream) do(method string, body []byte, connID, sid string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(s.ctx, method, s.url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range s.hdr {
		req.Header[k] = v
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", mimeJSON)
		req.Header.Set("Accept", mimeJSON+", "+mimeEventStream)
	case http.MethodGet:
		req.Header.Set("Accept", mimeEventStream)
	}
	if connID != "" {
		req.Header.Set(HeaderConnectionID, connID)
	}
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	resp, err := s.o.Client.Do(req)
	if err != nil {
		if s.ctx.Err() != nil {
			return nil, s.endErr()
		}
		return nil, fmt.Errorf("remote: %s: %w", s.url, err)
	}
	return resp, nil
}

// fail ends the connection with err: nothing more is sent, the streams
// get endGrace to deliver what the server wrote last, and Read returns EOF
// after what came.
func (s *httpStream) fail(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.err = true, err
	connID := s.connID
	s.cut = time.AfterFunc(endGrace, s.cancel)
	s.mu.Unlock()
	s.o.Logger.Debug("remote connection ended", "url", s.url, "err", err)
	s.deleteConn(connID)
	s.finish()
}

// finish closes done once the connection ended and no reader is left.
func (s *httpStream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended && s.readers == 0 && !s.finished {
		s.finished = true
		s.cut.Stop()
		s.cancel()
		close(s.done)
	}
}

// Err returns why the connection ended, when the server refused it or the
// network failed (nil while it lives or after Close).
func (s *httpStream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.err, io.ErrClosedPipe) {
		return nil
	}
	return s.err
}

func (s *httpStream) endErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return io.ErrClosedPipe
}

// deleteConn ends the connection on the server, briefly and politely.
func (s *httpStream) deleteConn(connID string) {
	if connID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	for k, v := range s.hdr {
		req.Header[k] = v
	}
	req.Header.Set(HeaderConnectionID, connID)
	if resp, err := s.o.Client.Do(req); err == nil {
		drain(resp)
	}
}

// Close ends the connection (DELETE) and waits for its readers.
func (s *httpStream) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.fail(io.ErrClosedPipe)
	s.cancel()
	s.wg.Wait()
	if s.ownClient {
		s.o.Client.CloseIdleConnections()
	}
	return nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

var errLineTooLong = errors.New("remote: line too long")

// readLine reads one line without its CR/LF ending, up to max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > max {
			return nil, errLineTooLong
		}
		if err == nil {
			if line == nil {
				line = part
			} else {
				line = append(line, part...)
			}
			line = bytes.TrimRight(line, "\r\n")
			return line, nil
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
		line = append(line, part...)
	}
}
