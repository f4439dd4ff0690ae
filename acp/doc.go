// Package acp is the Agent Client Protocol (ACP v1) for Go: the wire types of
// every stable method, capability, content block and session update
// (acp-v1.md, schema 1.21.0) plus the stabilized subagent additions
// (acp-subagents.md), method-name constants, error codes, the
// newline-delimited JSON [Stream], and typed connections for both sides.
//
// It imports nothing of dshd: only the standard library, log/slog and
// github.com/sourcegraph/jsonrpc2.
//
// # Serving an agent
//
//	conn := acp.NewAgentSideConn(rwc, myAgent, &acp.ConnOptions{Logger: log})
//	<-conn.Done()
//
// myAgent implements [Agent]; conn implements [Client], so the agent calls the
// editor through it (conn.SessionUpdate, conn.RequestPermission, ...). The
// client side is the mirror image: [NewClientSideConn] serves a [Client] and
// implements [Agent].
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
//
// # Unions
//
// ContentBlock, SessionUpdate, ToolCallContent, McpServer, AuthMethod,
// RequestPermissionOutcome, SessionConfigOption, ConfigValue,
// EmbeddedResourceResource, ElicitationPropertySchema and StateUpdate are
// sealed interfaces implemented by pointers to their variants. Each variant
// marshals its own discriminator; each union has one decoder that fails with
// the unknown tag's name.
//
// Surface choices: the npm 2.4.0 schema is a little newer than 1.21.0; its
// notice/compaction updates and the tool-call "name" field are not modelled
// (acp-v1.md §23.1). Unknown fields are ignored on input.
package acp
