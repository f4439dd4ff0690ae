// errors.go: JSON-RPC error values (acp-v1 §21).

package acp

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
)

// Error is a JSON-RPC error object (acp-v1 §21). It is also the error type of
// this package: a handler returns one (or wraps one with %w) to choose the code
// sent to the peer, and a failed outgoing call returns the peer's error as an
// *Error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Data != nil {
		if b, err := json.Marshal(e.Data); err == nil {
			return fmt.Sprintf("acp: %s (%d): %s", e.Message, e.Code, b)
		}
	}
	return fmt.Sprintf("acp: %s (%d)", e.Message, e.Code)
}

// Is makes errors.Is match any *Error with the same code, whatever its Message
// and Data, so errors.Is(err, ErrResourceNotFound) works for every -32002.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// WithData returns a copy of e carrying data.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// Errorf returns a copy of e whose Data is the formatted string; the code and
// message stay those of e.
func (e *Error) Errorf(format string, args ...any) *Error {
	return e.WithData(fmt.Sprintf(format, args...))
}

// Sentinels for every code of acp-v1 §21. Compare with errors.Is; derive
// detailed errors with WithData or Errorf.
var (
	ErrParse            = &Error{Code: -32700, Message: "Parse error"}
	ErrInvalidRequest   = &Error{Code: -32600, Message: "Invalid request"}
	ErrMethodNotFound   = &Error{Code: -32601, Message: "Method not found"}
	ErrInvalidParams    = &Error{Code: -32602, Message: "Invalid params"}
	ErrInternal         = &Error{Code: -32603, Message: "Internal error"}
	ErrRequestCancelled = &Error{Code: -32800, Message: "Request cancelled"}
	ErrAuthRequired     = &Error{Code: -32000, Message: "Authentication required"}
	ErrResourceNotFound = &Error{Code: -32002, Message: "Resource not found"}
)

// ErrConnClosed is returned by calls on a closed connection or stream. It
// matches net.ErrClosed too.
var ErrConnClosed = fmt.Errorf("acp: connection closed: %w", net.ErrClosed)

// Reason returns the human reason of e, for a person or a model to read:
// the reason the peer put in Data, whichever field carries it, else
// Message. Peers spell it differently: Data itself as a string, or a
// member "reason" (dshd), "details" (the TypeScript SDK, acpx), "error"
// (the Go SDK) or "message" of a Data object, searched in that order, a
// member that is itself an object searched the same way. A "field" member
// beside the reason is named before it ("cwd: must be absolute"). The
// reason replaces a Message that only names the code ("Internal error");
// a Message that says more keeps it and the reason follows.
func (e *Error) Reason() string {
	msg := strings.TrimSpace(e.Message)
	r := reasonIn(plainData(e.Data), 0)
	switch {
	case r == "" && msg == "":
		return fmt.Sprintf("error %d", e.Code)
	case r == "":
		return msg
	case msg == "" || isCodeMessage(msg) || strings.Contains(r, msg):
		return r
	case strings.Contains(msg, r):
		return msg
	}
	return msg + ": " + r
}

// reasonKeys are the members that carry a reason, in the order searched.
var reasonKeys = []string{"reason", "details", "error", "message"}

// reasonIn finds the reason in decoded JSON data (see [Error.Reason]).
func reasonIn(v any, depth int) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case map[string]any:
		if depth > 3 {
			return ""
		}
		for _, k := range reasonKeys {
			r := reasonIn(v[k], depth+1)
			if r == "" {
				continue
			}
			if f, ok := v["field"].(string); ok && f != "" && !strings.HasPrefix(r, f) {
				r = f + ": " + r
			}
			return r
		}
	}
	return ""
}

// plainData returns Data as decoded JSON (strings, maps, slices, numbers),
// whatever Go value holds it: a peer's error keeps it as raw JSON, dshd's
// own as maps or strings.
func plainData(d any) any {
	switch d := d.(type) {
	case nil, string, map[string]any:
		return d
	case json.RawMessage:
		var v any
		if json.Unmarshal(d, &v) != nil {
			return nil
		}
		return v
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return plainData(json.RawMessage(b))
}

// isCodeMessage reports whether msg only names an error code, as the
// standard messages of §21 do.
func isCodeMessage(msg string) bool {
	for _, e := range []*Error{ErrParse, ErrInvalidRequest, ErrMethodNotFound, ErrInvalidParams, ErrInternal, ErrRequestCancelled, ErrAuthRequired, ErrResourceNotFound} {
		if strings.EqualFold(msg, e.Message) {
			return true
		}
	}
	return strings.EqualFold(msg, "Internal server error") || strings.EqualFold(msg, "Server error")
}

// invalidField is the -32602 error naming a params field.
func invalidField(field, reason string) *Error {
	return ErrInvalidParams.WithData(map[string]any{"field": field, "reason": reason})
}
