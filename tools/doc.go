// Package tools is the tool contract: what a tool is ([Tool], [Call],
// [Result], [Content]), the environment a tool runs in ([Env]: the
// workspace, a [FileSystem], a [Runner], a [Permission] gate and the plan
// sink), the vocabulary of permission requests, and the [Registry] a
// session's agent picks its tools from.
//
// A tool never knows ACP. acp/server supplies the editor-backed
// FileSystem and Runner; tools/workspace supplies the local file system
// and the confinement of paths; the built-in coding tools live in
// tools/builtin, the search engine behind glob and grep in tools/search.
//
// Failures the model should see (a bad path, a missing match, a command
// that exits non-zero) are results with IsError set. Execute returns a Go
// error only when the turn cannot go on (the context was cancelled, the
// connection is gone).
package tools
