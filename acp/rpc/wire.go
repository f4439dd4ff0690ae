// wire.go: mapping errors to and from the JSON-RPC error objects jsonrpc2
// carries (acp-v1 §21).

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"
)

// toWire maps any handler error to the JSON-RPC error sent to the peer. An
// *acp.Error found with errors.As keeps its code, message and data; a context
// cancellation becomes -32800 (acp-v1 §20: internal cancellation answers like
// $/cancel_request); anything else becomes -32603 with a short data message,
// the detail going to the log only.
func toWire(err error, log *slog.Logger) *jsonrpc2.Error {
	var e *acp.Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e = acp.ErrRequestCancelled
	default:
		if log != nil {
			log.Warn("acp: handler error", "err", err)
		}
		e = acp.ErrInternal.WithData("internal error")
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

// fromWire turns a peer's error into an *acp.Error; Data stays raw JSON.
func fromWire(w *jsonrpc2.Error) *acp.Error {
	e := &acp.Error{Code: int(w.Code), Message: w.Message}
	if w.Data != nil {
		e.Data = json.RawMessage(*w.Data)
	}
	return e
}
