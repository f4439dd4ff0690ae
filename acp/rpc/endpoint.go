// endpoint.go: what both ends of a connection offer alike.

package rpc

import (
	"context"
	"encoding/json"
)

// endpoint is the part of [AgentSideConn] and [ClientSideConn] that does
// not depend on the side.
type endpoint struct{ c *conn }

// Done is closed once the connection is closed and all its goroutines,
// handlers included, have returned.
func (e endpoint) Done() <-chan struct{} { return e.c.done }

// Close closes the connection and waits like Done. Do not call it from a
// handler of this connection.
func (e endpoint) Close() error { return e.c.close() }

// Call sends any request (an extension method, a relayed one) and returns
// the raw result.
func (e endpoint) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return e.c.callRaw(ctx, method, params)
}

// Notify sends any notification, in call order with the connection's other
// notifications (SessionUpdate on the agent's side).
func (e endpoint) Notify(_ context.Context, method string, params any) error {
	return e.c.notify(method, params)
}
