// Package remote is ACP's standard remote transport, the "Streamable HTTP &
// WebSocket Transport" RFD, both ways: [Handler] serves the /acp endpoint
// (a WebSocket upgrade on GET; POST, long-lived SSE GET streams and DELETE
// for Streamable HTTP), and [Dial] reaches an agent behind one. Either way
// an ACP connection becomes an [io.ReadWriteCloser] carrying one
// newline-terminated JSON-RPC message per line, the framing acp/rpc's
// stream reads and writes, so the same rpc connections and the same agent
// serve every transport: one accepted WebSocket or HTTP connection is one
// call of [Options.Serve].
//
// Framing. JSON text holds a raw line break only as white space between
// tokens, so a WebSocket text frame or an SSE event becomes one line by
// turning its CR and LF bytes into spaces, and a line written by acp/rpc
// becomes one frame or event by cutting at its newline. Nothing is parsed
// on the WebSocket path; the Streamable HTTP path reads each message's
// envelope (id, method, the sessionId in params or result) to route it.
//
// Order. A WebSocket is one stream, in order. Streamable HTTP spreads a
// connection over several SSE streams that have no order between them,
// so each stream's reader writes a message only once the messages the
// agent wrote before it on the other streams that have a reader, or that
// the client awaits (it sent session/load or session/resume for their
// session and has not opened them yet), are written and flushed, or have
// waited WriteTimeout for a reader that takes them (httpconn.go, queued
// and holding): session/load's answer on the connection stream comes
// after the replay on the session stream, also when the client opens the
// session stream for the first time after the load was handled.
//
// It imports acp's internal JSON scanner, the standard library and
// github.com/coder/websocket, and nothing else of the project.
//
// Goroutines: a served WebSocket connection runs in its handler's
// goroutine plus one keepalive pinger; a Streamable HTTP connection runs
// Serve on a goroutine the Handler owns until DELETE, an idle end or
// [Handler.Close]. A dialled connection owns its SSE readers (HTTP) and
// stops them on Close.
package remote
