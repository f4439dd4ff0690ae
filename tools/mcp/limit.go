// This file guards the SDK's reading of a stdio server's stdout: one
// JSON-RPC message per line, as the MCP spec asks, each at most the
// message limit. A line that is not JSON (a banner, a stray print) is
// skipped instead of ending the connection; an answer over the limit is
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
)

// idPrefixBytes is how much of an oversized line is kept to find the id
// of the request it answers (servers write "id" before "result").
const idPrefixBytes = 4096

// maxLoggedLine caps a skipped line quoted in the log.
const maxLoggedLine = 200

// stdoutFilter is the io.ReadCloser the SDK reads a stdio server through.
// Only the SDK's single reader goroutine calls Read.
type stdoutFilter struct {
	r       *bufio.Reader
	c       io.Closer
	max     int
	log     *slog.Logger
	red     *redactor
	pending []byte // the rest of the line being handed out

	warnedNonJSON, warnedTooLong bool
}

func newStdoutFilter(rc io.ReadCloser, max int, log *slog.Logger, red *redactor) *stdoutFilter {
	return &stdoutFilter{r: bufio.NewReaderSize(rc, 64<<10), c: rc, max: max, log: log, red: red}
}

func (f *stdoutFilter) Close() error { return f.c.Close() }

func (f *stdoutFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.next()
		if err != nil {
			return 0, err
		}
		f.pending = line
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next returns the next line to give the SDK, with its newline.
func (f *stdoutFilter) next() ([]byte, error) {
	for {
		line, total, err := f.readLine()
		if total > f.max {
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

// readLine reads one line of at most f.max bytes (see readBoundedLine).
func (f *stdoutFilter) readLine() (line []byte, total int, err error) {
	return readBoundedLine(f.r, f.max)
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
	f.log.Log(context.Background(), level, "mcp server wrote a line on stdout that is not a JSON-RPC message; skipping it (stdout must carry only MCP messages, logs belong on stderr)",
		"line", f.red.scrub(string(trimForLog(line))))
}

// tooLong handles a line over the limit: an answer to one of our requests
// becomes an error answer to it; anything else is dropped.
func (f *stdoutFilter) tooLong(head []byte, total int) []byte {
	id, ok := responseID(head)
	level := slog.LevelDebug
	if !f.warnedTooLong {
		f.warnedTooLong = true
		level = slog.LevelWarn
	}
	f.log.Log(context.Background(), level, "mcp server sent a message over the limit; dropped it",
		"bytes", total, "limit", f.max, "setting", "--mcp-max-message-bytes", "answers_request", ok)
	if !ok {
		return nil
	}
	return tooLongAnswer(id, f.max)
}

// tooLongAnswer is the JSON-RPC error answer, with its newline, that
// stands in for an answer to request id over the limit max.
func tooLongAnswer(id json.RawMessage, max int) []byte {
	msg := fmt.Sprintf("its answer was over %d bytes, the limit on one MCP message (--mcp-max-message-bytes, mcpMaxMessageBytes in the config file); it was dropped", max)
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
