// Package mcp turns the MCP servers an ACP editor passes in session/new,
// session/load and session/resume into tools for the session's agent, with
// the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk/mcp).
//
// [Connect] starts or dials every configured server at once, each under its
// own start timeout, lists its tools and registers each one in the session's
// [tools.Registry] layer as mcp__SERVER__TOOL. Both parts are sanitized to
// [A-Za-z0-9_-] (one '_' per other character); a name longer than 64
// characters, or one whose sanitized form another tool of the same server
// already took, is cut and ends in '_' and 8 hex digits of a hash of the
// raw names, so the same server always yields the same names. A tool
// whose name another server's tool took (server names that sanitize
// alike, "a.b" and "a_b") gets the hashed form too. A server
// that cannot be reached yields a [Warning]; the session goes on without
// it. [Set.Close] ends every connection and unregisters the tools.
//
// # Transports
//
// stdio, streamable HTTP ("http") and the deprecated HTTP+SSE ("sse") all
// work; [Capabilities] says so to acp/server. A stdio server runs in its own
// process group (unix), in the session's cwd, with a minimal inherited
// environment ([DefaultInheritEnv]) plus its configured variables; its
// stdout is the MCP pipe and its stderr goes to the logger, never to our
// stdout. Teardown is the MCP spec's: close its stdin, wait, SIGTERM the
// group, wait, SIGKILL the group, reap. With [Options].Sandbox it runs as a
// command does (tools/sandbox): confined to the session's roots, under a
// helper that ends everything it started when dshd dies; a sandbox that
// must confine and cannot refuses it (a [Warning] that is ErrStart and
// sandbox.ErrRefused), and a server that dies says which sandbox it ran
// in and what the sandbox refused it.
//
// # Tools
//
// A tool's description is the server's, prefixed with "[MCP server X]"; its
// input schema is the server's inputSchema. A tool whose annotations carry
// readOnlyHint is of kind read and runs without a permission prompt
// ([tools.EffectRead]); every other MCP tool is of kind other and asks as a
// command does ([tools.EffectExecute]), since an MCP tool may do anything.
// The readOnlyHint is trusted because the user chose to configure the
// server; destructiveHint and the other hints change nothing. Results map to text for the model: text as is, images
// and audio as a short description, embedded text resources with their
// text, structuredContent as JSON when the server sent no text. isError and
// transport failures are error results the model sees, not Go errors.
// Cancelling a call's context cancels the request (the SDK sends
// notifications/cancelled) and Execute returns the context's error; MCP
// progress notifications become the call's interim content.
//
// A server that dies (a crash, a dropped HTTP session) is not restarted:
// its tools stay registered and answer every later call with an error
// result that says the server is gone, so a turn never hangs on it. A
// notifications/tools/list_changed re-lists the server's tools and brings
// the registry in line.
//
// # Limits
//
// A server is a peer and is held to [Options]' bounds, each hit logged
// once per server: one message (a stdout line, an HTTP body, an SSE
// line) is at most MaxMessageBytes, and an answer over it becomes an
// error answer to its request, so only that call fails; a stdout line
// that is not JSON is skipped, not taken for a broken connection (see
// limit.go). At most MaxTools tools are used and listed; descriptions
// are cut at MaxDescriptionBytes; a tool whose input schema is over
// MaxSchemaBytes or nests deeper than MaxSchemaDepth is left out with a
// [Warning]. A result's text, and its structuredContent passed on as
// rawOutput, are capped at MaxOutput; progress is passed on at most once
// per ProgressInterval a call. An http or sse server's headers go to its
// URL's origin only, and a redirect elsewhere is not followed.
//
// # Goroutines
//
// Per server the package owns: the SDK's connection goroutines, a watcher
// that notices the connection ending, a re-sync loop for list changes and,
// for stdio, a reaper (cmd.Wait) and a stderr reader. [Set.Close] stops
// and waits for all of them. This package never imports acp or acp/server.
package mcp
