// This file holds the limit on one message a server sends, and what the
// SDK reads through it. A stdio server's stdout carries one JSON-RPC
// message per line, as the MCP spec asks, each at most the limit; a line
// that is not JSON (a banner, a stray print) is skipped instead of ending
// the connection. Over HTTP a response body is one message and an event
// stream's lines are each held to the limit. An answer over the limit is
// replaced by an error answer to the same request, so the one call fails
// with a clear reason and the server stays usable.

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
)

// idPrefixBytes is how much of an oversized line is kept to find the id
// of the request it answers (servers write "id" before "result").
const idPrefixBytes = 4096

// maxLoggedLine caps a skipped line quoted in the log.
const maxLoggedLine = 200

// msgLimit is the limit on one message of a server, max bytes, the setting
// that names it, and the log of the messages dropped for it.
type msgLimit struct {
	max     int
	setting string
	log     *slog.Logger
	warned  atomic.Bool
}

// dropped logs a message of size bytes over the limit, the first at Warn
// and later ones at Debug; answers says whether it answered one of our
// requests (and becomes an error answer to it).
func (l *msgLimit) dropped(size int, answers bool) {
	level := slog.LevelDebug
	if !l.warned.Swap(true) {
		level = slog.LevelWarn
	}
	l.log.Log(context.Background(), level, "mcp server sent a message over the limit; dropped it",
		"bytes", size, "limit", l.max, "setting", l.setting, "answers_request", answers)
}

// lineReader hands out whole lines to reads of any size: while none is
// pending it asks next for one (nil with a nil error: ask again).
type lineReader struct {
	next    func() ([]byte, error)
	pending []byte // the rest of the line being handed out
}

func (r *lineReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		line, err := r.next()
		if err != nil {
			return 0, err
		}
		r.pending = line
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// stdoutFilter is the io.ReadCloser the SDK reads a stdio server through.
// Only the SDK's single reader goroutine calls Read.
type stdoutFilter struct {
	lineReader
	r     *bufio.Reader
	c     io.Closer
	limit *msgLimit
	red   *redactor

	warnedNonJSON bool
}

func newStdoutFilter(rc io.ReadCloser, limit *msgLimit, red *redactor) *stdoutFilter {
	f := &stdoutFilter{r: bufio.NewReaderSize(rc, 64<<10), c: rc, limit: limit, red: red}
	f.next = f.nextLine
	return f
}

func (f *stdoutFilter) Close() error { return f.c.Close() }

// nextLine returns the next line to give the SDK, with its newline.
func (f *stdoutFilter) nextLine() ([]byte, error) {
	for {
		line, total, err := readBoundedLine(f.r, f.limit.max)
		if total > f.limit.max {
			if answer := f.tooLong(line, total); answer != nil {
				return answer, nil
			}
		} else if len(line) > 0 {
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				if (msg[0] == '{' || msg[0] == '[') && json.Valid(msg) {
					return append(msg, '\n'), nil
				}
				f.nonJSON(msg)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// readBoundedLine reads one line. It returns the whole line when it holds
// at most max bytes, else only its first idPrefixBytes, and the line's
// length either way; what is past the limit is read and dropped.
func readBoundedLine(r *bufio.Reader, max int) (line []byte, total int, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		total += len(frag)
		switch {
		case total <= max:
			line = append(line, frag...)
		case len(line) < idPrefixBytes:
			line = append(line, frag[:min(len(frag), idPrefixBytes-len(line))]...)
		}
		if total > max && len(line) > idPrefixBytes {
			line = line[:idPrefixBytes:idPrefixBytes] // let the big buffer go
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, total, err
		}
	}
}

// nonJSON logs a skipped line: the first at Warn, later ones at Debug.
func (f *stdoutFilter) nonJSON(line []byte) {
	level := slog.LevelDebug
	if !f.warnedNonJSON {
		f.warnedNonJSON = true
		level = slog.LevelWarn
	}
	f.limit.log.Log(context.Background(), level, "mcp server wrote a line on stdout that is not a JSON-RPC message; skipping it (stdout must carry only MCP messages, logs belong on stderr)",
		"line", f.red.scrub(string(trimForLog(line))))
}

// tooLong handles a line over the limit: an answer to one of our requests
// becomes an error answer to it; anything else is dropped.
func (f *stdoutFilter) tooLong(head []byte, total int) []byte {
	id, ok := responseID(head)
	f.limit.dropped(total, ok)
	if !ok {
		return nil
	}
	return f.limit.answer(id)
}

// sseFilter passes an event stream on line by line, each line at most
// the message limit: a longer "data:" line that answers one of our
// requests becomes an error answer to it, any other long line is dropped.
type sseFilter struct {
	lineReader
	r     *bufio.Reader
	c     io.Closer
	limit *msgLimit
}

func newSSEFilter(rc io.ReadCloser, limit *msgLimit) *sseFilter {
	f := &sseFilter{r: bufio.NewReaderSize(rc, 64<<10), c: rc, limit: limit}
	f.next = f.nextLine
	return f
}

// nextLine returns the stream's next line, a long one replaced or
// dropped.
func (f *sseFilter) nextLine() ([]byte, error) {
	line, total, err := readBoundedLine(f.r, f.limit.max)
	if total > f.limit.max {
		line = f.tooLong(line, total)
	}
	if err != nil && len(line) == 0 {
		return nil, err
	}
	return line, nil
}

func (f *sseFilter) tooLong(head []byte, total int) []byte {
	data, isData := bytes.CutPrefix(head, []byte("data:"))
	var id json.RawMessage
	ok := false
	if isData {
		id, ok = responseID(bytes.TrimPrefix(data, []byte(" ")))
	}
	f.limit.dropped(total, ok)
	if !ok {
		return nil
	}
	return append([]byte("data: "), f.limit.answer(id)...)
}

func (f *sseFilter) Close() error { return f.c.Close() }

// boundedBody reads a response body of at most the limit whole on the
// first Read; a longer one is replaced by a JSON-RPC error answer to the
// request it answered (found at its start), or fails the read.
type boundedBody struct {
	body  io.ReadCloser
	limit *msgLimit
	r     io.Reader // nil until the first Read
	err   error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.r == nil {
		b.fill()
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *boundedBody) fill() {
	data, err := io.ReadAll(io.LimitReader(b.body, int64(b.limit.max)+1))
	if err != nil {
		b.r, b.err = bytes.NewReader(nil), err
		return
	}
	if len(data) <= b.limit.max {
		b.r = bytes.NewReader(data)
		return
	}
	id, ok := responseID(data[:min(len(data), idPrefixBytes)])
	b.limit.dropped(len(data), ok)
	if !ok {
		b.r, b.err = bytes.NewReader(nil), fmt.Errorf("the server's answer was over %d bytes, the limit on one MCP message (%s)", b.limit.max, b.limit.setting)
		return
	}
	b.r = bytes.NewReader(b.limit.answer(id))
}

func (b *boundedBody) Close() error { return b.body.Close() }

// answer is the JSON-RPC error answer, with its newline, that stands in
// for an answer to request id over the limit.
func (l *msgLimit) answer(id json.RawMessage) []byte {
	msg := fmt.Sprintf("its answer was over %d bytes, the limit on one MCP message (%s); it was dropped", l.max, l.setting)
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": -32603, "message": msg},
	})
	if err != nil {
		panic(err) // a RawMessage that is valid JSON and strings always marshal
	}
	return append(b, '\n')
}

// responseID finds the id of a JSON-RPC response from the start of its
// line: the value of the top-level "id" key, when it comes before
// "method" (a request or notification is not answered here) and before
// the prefix ends.
func responseID(head []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch key {
		case "method":
			return nil, false
		case "id":
			var id json.RawMessage
			if dec.Decode(&id) != nil || len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
				return nil, false
			}
			return id, true
		}
		if skipValue(dec) != nil {
			return nil, false
		}
	}
	return nil, false
}

// skipValue reads past one JSON value, token by token, so a value cut
// by the prefix's end is an error rather than a buffered copy.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func trimForLog(b []byte) []byte {
	if len(b) > maxLoggedLine {
		return append(b[:maxLoggedLine:maxLoggedLine], "…"...)
	}
	return b
}
