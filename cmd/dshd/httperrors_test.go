// Tests of the http(s) listener's ErrorLog against the real net/http: each
// message prefix httpErrorLog sorts on is provoked here, so that a Go
// release that rewords one fails a test instead of moving a handler's
// panic back out of sight.

package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// recordSink is a slog.Handler that hands every record to the test.
type recordSink chan slog.Record

func (recordSink) Enabled(context.Context, slog.Level) bool { return true }
func (s recordSink) Handle(_ context.Context, r slog.Record) error {
	s <- r
	return nil
}
func (s recordSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s recordSink) WithGroup(string) slog.Handler      { return s }

// awaitRecord returns the first record from s whose message starts with
// prefix, and fails t if none comes before ctx ends.
func awaitRecord(ctx context.Context, t *testing.T, s recordSink, prefix string) slog.Record {
	t.Helper()
	for {
		select {
		case r := <-s:
			if strings.HasPrefix(r.Message, prefix) {
				return r
			}
			t.Logf("other record: %s %q", r.Level, r.Message)
		case <-ctx.Done():
			t.Fatalf("no log record starting %q", prefix)
		}
	}
}

// errorLogServer serves h on loopback with the listener's ErrorLog writing
// to a new sink.
func errorLogServer(t *testing.T, h http.HandlerFunc, tlsOn bool) (*httptest.Server, recordSink) {
	sink := make(recordSink, 64)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = httpErrorLog(slog.New(sink))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(!tlsOn)
	srv.Config.Protocols = &p
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, sink
}

// get sends one request over the given protocols and drops the answer,
// or the error a broken handler causes.
func get(srv *httptest.Server, http2 bool) {
	var p http.Protocols
	p.SetHTTP1(!http2)
	p.SetUnencryptedHTTP2(http2)
	cl := &http.Client{Transport: &http.Transport{Protocols: &p}}
	defer cl.CloseIdleConnections()
	if resp, err := cl.Get(srv.URL); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// A handler's bug is an error in dshd, whatever the log level; net/http
// reports it only through ErrorLog, which before went to Debug.
func TestHTTPErrorLog_AHandlersBugIsLoggedAtError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		http2  bool
		h      http.HandlerFunc
		prefix string
	}{
		{"a panic over HTTP/1", false, func(http.ResponseWriter, *http.Request) { panic("boom") }, "http: panic serving "},
		{"a panic over HTTP/2", true, func(http.ResponseWriter, *http.Request) { panic("boom") }, "http2: panic serving "},
		{"a second WriteHeader", false, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.WriteHeader(http.StatusTeapot)
		}, "http: superfluous response.WriteHeader call"},
		{"a WriteHeader after a hijack", false, afterHijack(func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }),
			"http: response.WriteHeader on hijacked connection"},
		{"a Write after a hijack", false, afterHijack(func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }),
			"http: response.Write on hijacked connection"},
		{"an invalid Content-Length", false, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "many")
			w.WriteHeader(http.StatusOK)
		}, "http: invalid Content-Length of "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, sink := errorLogServer(t, tc.h, false)
			get(srv, tc.http2)
			r := awaitRecord(testkit.Context(t), t, sink, tc.prefix)
			if r.Level != slog.LevelError {
				t.Errorf("%q logged at %s, want ERROR", r.Message, r.Level)
			}
		})
	}
}

// A panic's stack goes into an attribute, so that the message stays one
// line that names the peer.
func TestHTTPErrorLog_APanicsStackIsAnAttribute(t *testing.T) {
	srv, sink := errorLogServer(t, func(http.ResponseWriter, *http.Request) { panic("boom") }, false)
	get(srv, false)
	r := awaitRecord(testkit.Context(t), t, sink, "http: panic serving ")
	if strings.Contains(r.Message, "\n") || !strings.Contains(r.Message, "boom") {
		t.Errorf("message %q, want one line with the panic", r.Message)
	}
	var stack string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stack" {
			stack = a.Value.String()
		}
		return true
	})
	if !strings.Contains(stack, "goroutine") {
		t.Errorf("stack attribute %q, want the goroutine's stack", stack)
	}
}

// What a peer causes on its own connection (here a TLS handshake that is
// not one) stays at Debug: a peer must not write the log at will.
func TestHTTPErrorLog_APeersBrokenTLSHandshakeStaysAtDebug(t *testing.T) {
	srv, sink := errorLogServer(t, func(http.ResponseWriter, *http.Request) {}, true)
	nc, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, bufio.NewReader(nc))
	r := awaitRecord(testkit.Context(t), t, sink, "http: TLS handshake error from ")
	if r.Level != slog.LevelDebug {
		t.Errorf("%q logged at %s, want DEBUG", r.Message, r.Level)
	}
}

// afterHijack is a handler that hijacks its connection and then calls
// then, a handler's bug net/http reports in its error log.
func afterHijack(then func(http.ResponseWriter)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		nc, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			defer nc.Close()
		}
		then(w)
	}
}
