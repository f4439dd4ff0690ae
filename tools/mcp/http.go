// This file is the HTTP client of http and sse servers: the configured
// headers go to the configured host only, a redirect elsewhere is not
// followed, a response body is read only up to the message limit and an
// event stream's lines are each held to it.

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
	"mime"
	"net/http"
	"net/url"
	"sync/atomic"
)

// httpClient returns a client of its own (so Close can drop its idle
// connections) that sends the configured headers to the configured
// origin, and to nowhere else.
func (s *server) httpClient() *http.Client {
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		s.httpTr = dt.Clone()
	} else {
		s.httpTr = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	origin := ""
	if u, err := url.Parse(s.cfg.URL); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	t := &peerTransport{base: s.httpTr, origin: origin, headers: s.cfg.Headers, max: s.opts.MaxMessageBytes, log: s.log}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != origin {
				return fmt.Errorf("the server redirected to %s, another host, which dshd does not follow (give that URL in the configuration if it is meant)", safeURL(req.URL.String()))
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// peerTransport adds the configured headers to requests to the configured
// origin and bounds the bodies of answers.
type peerTransport struct {
	base    http.RoundTripper
	origin  string
	headers []Header
	max     int
	log     *slog.Logger
	warned  atomic.Bool
}

func (t *peerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && originOf(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for _, h := range t.headers {
			req.Header.Set(h.Name, h.Value)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	// An event stream is long-lived by design: each of its lines is
	// bounded. Anything else is one message.
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &sseFilter{r: bufio.NewReaderSize(resp.Body, 64<<10), c: resp.Body, t: t}
	} else {
		resp.Body = &boundedBody{body: resp.Body, t: t}
	}
	resp.ContentLength = -1
	return resp, nil
}

// tooLong logs, once at Warn and then at Debug, a message over the limit.
func (t *peerTransport) tooLong(size int, answers bool) {
	level := slog.LevelDebug
	if !t.warned.Swap(true) {
		level = slog.LevelWarn
	}
	t.log.Log(context.Background(), level, "mcp server sent a message over the limit; dropped it",
		"bytes", size, "limit", t.max, "setting", "--mcp-max-message-bytes", "answers_request", answers)
}

// sseFilter passes an event stream on line by line, each line at most
// the message limit: a longer "data:" line that answers one of our
// requests becomes an error answer to it, any other long line is dropped.
type sseFilter struct {
	r       *bufio.Reader
	c       io.Closer
	t       *peerTransport
	pending []byte
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, total, err := readBoundedLine(f.r, f.t.max)
		if total > f.t.max {
			line = f.tooLong(line, total)
		}
		f.pending = line
		if err != nil && len(f.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *sseFilter) tooLong(head []byte, total int) []byte {
	data, isData := bytes.CutPrefix(head, []byte("data:"))
	var id json.RawMessage
	ok := false
	if isData {
		id, ok = responseID(bytes.TrimPrefix(data, []byte(" ")))
	}
	f.t.tooLong(total, ok)
	if !ok {
		return nil
	}
	return append([]byte("data: "), tooLongAnswer(id, f.t.max)...)
}

func (f *sseFilter) Close() error { return f.c.Close() }

// boundedBody reads a response body of at most t.max bytes whole on the
// first Read; a longer one is replaced by a JSON-RPC error answer to the
// request it answered (found at its start), or fails the read.
type boundedBody struct {
	body io.ReadCloser
	t    *peerTransport
	r    io.Reader // nil until the first Read
	err  error
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
	data, err := io.ReadAll(io.LimitReader(b.body, int64(b.t.max)+1))
	if err != nil {
		b.r, b.err = bytes.NewReader(nil), err
		return
	}
	if len(data) <= b.t.max {
		b.r = bytes.NewReader(data)
		return
	}
	id, ok := responseID(data[:min(len(data), idPrefixBytes)])
	b.t.tooLong(len(data), ok)
	if !ok {
		b.r, b.err = bytes.NewReader(nil), fmt.Errorf("the server's answer was over %d bytes, the limit on one MCP message (--mcp-max-message-bytes)", b.t.max)
		return
	}
	b.r = bytes.NewReader(tooLongAnswer(id, b.t.max))
}

func (b *boundedBody) Close() error { return b.body.Close() }
