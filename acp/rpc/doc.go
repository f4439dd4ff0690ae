// Package rpc carries ACP (package acp) over JSON-RPC 2.0: the
// newline-delimited JSON [Stream], one ordered dispatcher per connection,
// and the two typed ends, [AgentSideConn] and [ClientSideConn].
//
// It imports acp and github.com/sourcegraph/jsonrpc2, and nothing else of
// dshd. jsonrpc2 carries our outgoing calls only: it runs the read loop
// over the Stream, writes the requests we send (with ids we pick), keeps
// the table of pending calls, matches each response to its call by id and
// fails the pending calls when the stream ends. Every incoming line is
// checked and parsed once by the Stream, which hands requests and
// notifications straight to the dispatcher and passes jsonrpc2 only the
// responses, rebuilt clean; the result of a response to a pending call goes
// to that call past jsonrpc2, which would decode it twice for nothing.
//
// # Serving an agent
//
//	conn := rpc.NewAgentSideConn(rwc, myAgent, &rpc.ConnOptions{Logger: log})
//	<-conn.Done()
//
// myAgent implements [acp.Agent]; conn implements [acp.Client], so the
// agent calls the editor through it (conn.SessionUpdate,
// conn.RequestPermission, ...). The client side is the mirror image:
// [NewClientSideConn] serves an [acp.Client] and implements [acp.Agent].
//
// # Order and goroutines
//
// A connection owns four goroutines: the jsonrpc2 read loop, its context
// watcher, a shutdown watcher and one dispatcher; plus one goroutine per
// incoming request while its handler runs. The read loop only parses (once,
// in the [Stream]) and enqueues; it also matches responses to our own calls
// and applies $/cancel_request at once, even to a queued request. The
// dispatcher pops messages in arrival order.
// Notifications run to completion on it, in order. A request handler runs on
// its own goroutine, but the dispatcher waits until it returns or calls
// [Detach]: handlers are synchronous by default, and a long handler
// (session/prompt) detaches after its cheap prefix. [AgentSideConn.Close] and
// [ClientSideConn.Close] return once every goroutine of the connection has
// ended; handlers must therefore honour their context, and must not call
// Close themselves.
//
// On a [ClientSideConn] an outgoing call returns only after every
// notification that arrived before its response was handled, so Prompt
// returns after the Client saw the whole turn; a caller that is itself a
// handler the dispatcher waits for skips that wait (it would deadlock).
package rpc
