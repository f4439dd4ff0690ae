// errors.go: JSON-RPC error values and their mapping to the wire (acp-v1 §21).

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/sourcegraph/jsonrpc2"
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

// invalidField is the -32602 error naming a params field.
func invalidField(field, reason string) *Error {
	return ErrInvalidParams.WithData(map[string]any{"field": field, "reason": reason})
}

// toWire maps any handler error to the JSON-RPC error sent to the peer. An
// *Error found with errors.As keeps its code, message and data; a context
// cancellation becomes -32800 (acp-v1 §20: internal cancellation answers like
// $/cancel_request); anything else becomes -32603 with a short data message,
// the detail going to the log only.
func toWire(err error, log *slog.Logger) *jsonrpc2.Error {
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e = ErrRequestCancelled
	default:
		if log != nil {
			log.Warn("acp: handler error", "err", err)
		}
		e = ErrInternal.WithData("internal error")
	}
	w := &jsonrpc2.Error{Code: int64(e.Code), Message: e.Message}
	if e.Data != nil {
		b, merr := json.Marshal(e.Data)
		if merr != nil {
			b, _ = json.Marshal(fmt.Sprint(e.Data))
		}
		raw := json.RawMessage(b)
		w.Data = &raw
	}
	return w
}

// fromWire turns a peer's error into an *Error; Data stays raw JSON.
func fromWire(w *jsonrpc2.Error) *Error {
	e := &Error{Code: int(w.Code), Message: w.Message}
	if w.Data != nil {
		e.Data = json.RawMessage(*w.Data)
	}
	return e
}
