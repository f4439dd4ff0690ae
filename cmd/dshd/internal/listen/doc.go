// Package listen opens dshd's --listen address and admits its connections
// the way a daemon that runs for days must: a failed accept for want of
// descriptors (EMFILE, ENFILE, ECONNABORTED) backs off and retries, as
// net/http does, instead of ending the daemon; connections beyond
// MaxConnections, and unauthenticated ones beyond MaxUnauthenticated, are
// refused with a JSON-RPC error line (or what Options.Refuse says, an
// HTTP 503 for the http(s) listener); and a source whose connections keep
// failing authentication is refused for a while that doubles each time.
//
// It knows nothing of ACP beyond four optional methods of the connections
// it returns, Authenticated, AuthFailed, HandshakeExpired and
// PreAuthLineExceeded (whose answers make the closes of connections that
// have not authenticated, at the handshake deadline or for a line over the
// limit, one logged episode each until a connection authenticates), which
// the ACP connection (acp/rpc) calls; any
// transport that serves ACP over these connections reuses the same
// admission. A transport that authenticates its peers itself (the http(s)
// listener's bearer token) closes a connection at its handshake deadline
// with ExpireHandshake, in the same episode. It imports acp only for the error it writes when it
// refuses, and owns no goroutine: Accept runs on the caller's.
package listen
