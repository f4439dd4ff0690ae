// Package secret holds the one rule for "this variable looks like a
// credential", by its name: commands do not inherit such variables
// (tools/cmdenv), an acp child agent gets them only when its binding
// names them (subagents/acp), an MCP server's values under such names are
// scrubbed from its messages however short (tools/mcp), and a key so
// named hides its value in a child's diagnostics (subagents/internal/runkit).
// It imports only the standard library and keeps no state.
package secret
