// This file holds the package's sentinel errors, the error type that
// carries them with a scrubbed message, and the Warning of a server that
// could not be connected.

package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Sentinels a [Warning] (or an *[Error]) matches with errors.Is.
var (
	// ErrInvalidConfig reports a configuration that cannot work: no name,
	// no command, a bad URL, a bad env or header name, a duplicate name.
	ErrInvalidConfig = errors.New("mcp: invalid server configuration")
	// ErrUnsupportedTransport reports a transport this package does not know.
	ErrUnsupportedTransport = errors.New("mcp: unsupported transport")
	// ErrStart reports a server that could not be started or reached: the
	// command does not exist, the HTTP endpoint refused or failed.
	ErrStart = errors.New("mcp: server did not start")
	// ErrExited reports a stdio server that exited before the handshake
	// finished, or a server whose connection ended.
	ErrExited = errors.New("mcp: server exited")
	// ErrStartTimeout reports a server that did not finish the handshake
	// and the first tools/list within the start timeout.
	ErrStartTimeout = errors.New("mcp: server start timed out")
	// ErrTool reports a tool that could not be registered (its name is taken
	// by another tool of the session).
	ErrTool = errors.New("mcp: tool not registered")
	// ErrToolRenamed reports a tool the model is offered under another
	// name than the server's (one model APIs take, or one not taken).
	ErrToolRenamed = errors.New("mcp: tool renamed")
)

// Error is an error of this package: a sentinel Kind and a message that
// never holds a configured secret (env or header values, URL credentials).
type Error struct {
	Kind error
	Msg  string
	// cause is what went wrong underneath, for errors.Is (a start the
	// sandbox refused is sandbox.ErrRefused too); Msg already says it.
	cause error
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, e.Kind) true.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Warning reports a server (or one of its tools) the session has to do
// without. Its text names the server and the reason, and never holds a
// secret from the server's env or headers.
type Warning struct {
	// Server is the configured server name.
	Server string
	// Err is an *[Error]; errors.Is(w, ErrStartTimeout) and the like work
	// on the Warning itself.
	Err error
}

func (w Warning) Error() string {
	return fmt.Sprintf("MCP server %q: %v", w.Server, w.Err)
}

// Unwrap returns w.Err.
func (w Warning) Unwrap() error { return w.Err }

// redactor scrubs one server's secrets from messages.
type redactor struct {
	secrets []string
	urls    [][2]string // configured URL → its safe form
}

func newRedactor(cfg *ServerConfig) *redactor {
	r := &redactor{secrets: cfg.secrets()}
	if cfg.URL != "" {
		if safe := safeURL(cfg.URL); safe != cfg.URL {
			r.urls = append(r.urls, [2]string{cfg.URL, safe})
		}
	}
	// Longest first, so a secret that contains another is scrubbed whole.
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// scrub returns s without any of r's secrets.
func (r *redactor) scrub(s string) string {
	if r == nil {
		return s
	}
	for _, u := range r.urls {
		s = strings.ReplaceAll(s, u[0], u[1])
	}
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// errorf returns an *Error of kind whose message is scrubbed.
func (r *redactor) errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: r.scrub(fmt.Sprintf(format, args...))}
}

// safeURL returns raw without its user info and query, for messages.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[invalid URL]"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "[redacted]"
	}
	u.Fragment = ""
	return u.String()
}
