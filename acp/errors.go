// errors.go: JSON-RPC error values (acp-v1 §21).

package acp

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/dshd/dshd/internal/reason"
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
// the reason the peer put in Data, whichever field carries it ("reason",
// "details", "error", "message", or Data as a string), else Message; the
// rule is [reason.Of], which the model backend shares.
func (e *Error) Reason() string { return reason.Of(e.Code, e.Message, e.Data) }

// invalidField is the -32602 error naming a params field.
func invalidField(field, reason string) *Error {
	return ErrInvalidParams.WithData(map[string]any{"field": field, "reason": reason})
}
