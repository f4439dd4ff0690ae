// Package spawn is the subagent provider that runs a fresh in-process
// child: an empty conversation, its own system prompt (system.go: the
// subagent template unless the request or binding gives one, the
// permissions note, the persona and the project's AGENTS.md), and only the
// task it is given. It declares every start-time capability (output
// schema, depth limit, tool filter); its runs are Steerable and Resumable.
//
// spawn imports subagents and its in-process machinery, never another
// provider. Each run owns the goroutine of its child's turn; Dispose
// returns after it.
package spawn
