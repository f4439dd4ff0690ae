// This file routes the http(s) listener's ErrorLog into slog. net/http
// reports there, and nowhere else, both what a peer does to its own
// connection (a TLS handshake that fails, an HTTP/2 protocol error) and
// what is a bug of dshd's (a handler that panics, a response written
// twice). The first stays at Debug: a peer must not write the log at
// will. The second is an Error, seen at the default level.
//
// "timeout waiting for SETTINGS frames" is of the first kind, though it
// is a bound a peer meets: net/http's fixed 2 s between the HTTP/2
// preface and the first frame, which no setting changes. A conforming
// client sends its SETTINGS with the preface, so only a broken or
// hostile one meets it, and it is shorter than --header-timeout, the
// bound on a preface that does not come; a Warn would tell the operator
// of nothing to change.

package main

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// handlerBugs are the starts of net/http's ErrorLog messages that report a
// handler's mistake rather than a peer's; httperrors_test.go provokes each
// one against the real net/http, so that a Go release that rewords one
// fails a test rather than hiding it at Debug again.
var handlerBugs = []string{
	"http: panic serving ",
	"http2: panic serving ",
	"http: superfluous response.WriteHeader call",
	"http: response.WriteHeader on hijacked connection",
	"http: response.Write on hijacked connection",
	"http: invalid Content-Length of ",
}

// httpErrorLog returns an http.Server ErrorLog that writes to lg, a
// handler's bug at Error and the rest at Debug.
func httpErrorLog(lg *slog.Logger) *log.Logger {
	return log.New(errorLogWriter{lg}, "", 0)
}

// errorLogWriter takes one net/http message per Write (log.Logger writes
// each Printf whole).
type errorLogWriter struct{ log *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelDebug
	for _, b := range handlerBugs {
		if strings.HasPrefix(msg, b) {
			level = slog.LevelError
			break
		}
	}
	// A panic's message is followed by its stack: one line, and the
	// stack as an attribute.
	var attrs []slog.Attr
	if first, stack, ok := strings.Cut(msg, "\n"); ok {
		msg = first
		attrs = append(attrs, slog.String("stack", stack))
	}
	w.log.LogAttrs(context.Background(), level, msg, attrs...)
	return len(p), nil
}
