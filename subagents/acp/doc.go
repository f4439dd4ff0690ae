// Package acpprovider is the "acp" subagent provider: it delegates a task to
// another ACP agent — another dshd, or any agent that speaks ACP v1 — by
// driving it as a client over stdio (a child process) or a socket
// (unix:PATH, tcp:HOST:PORT), with the same contract as the in-process
// spawn and fork providers.
//
// A run is: initialize (protocol version 1, the child's capabilities),
// authenticate when a socket daemon asks for its token, session/new in the
// parent session's cwd (with the delegation depth in _meta, and the
// parent's MCP servers when the binding forwards them), then one
// session/prompt with the task. The child's agent_message_chunk text is the
// run's output, up to [Options.MaxOutputBytes] (the rest is counted and
// said). A failure to reach the agent (its program does not start,
// the handshake or session/new fails or times out) is, like a crash
// mid-turn, a run that ended with StopError and the reason, never an error
// from Start; a start whose context is already done starts no process and
// ends aborted. The parent serves the child's requests with its own
// environment, so a child never gets more than its parent: fs/* through
// the parent's workspace confinement, file system and permission gate,
// terminal/* on the parent's runner, session/request_permission through the
// parent's gate (which applies the parent's mode and remembered answers and
// reaches the editor). When the editor opted in to subagent sessions, the
// child is announced to it and its updates are relayed with every session
// id rewritten; the child's own children are re-announced under the child.
//
// It imports subagents and acp and never another provider.
//
// The package is named acpprovider, not acp, so that it never shadows the
// acp wire package it is written against. Its folder is subagents/acp;
// every import names it with that one alias:
//
//	acpprovider "github.com/dshd/dshd/subagents/acp"
//
// # Bindings
//
// A binding's options (`--subagent TOOL=acp,key=value,...`) choose the
// agent: agent=NAME (a named agent of [Options.Agents]; the other keys
// override it), command= and args= (a program on stdio; args are
// shell-like words), address= (unix:PATH or tcp:HOST:PORT) with token= or
// token-env=, env=, pass-env= and unset-env=, cwd= ("session" or an
// absolute path),
// timeout= and start-timeout=, forward-mcp=, and sandbox=, writable= and
// network= for the sandbox of a stdio child. With none of command, address
// and agent, the child is this program (`dshd serve` with
// [Options.DefaultArgs]). See the Key constants.
//
// Runs to one socket daemon share one connection (one session each); a
// dropped connection fails the runs on it and is dialled again for the
// next run. A stdio child is one process per child session.
//
// # Processes
//
// A stdio child runs in its own process group (so a signal reaches every
// helper it started) with stdin, stdout and stderr on pipes the provider
// owns; stdout is checked line by line and anything that is not a JSON
// object ends the run. Its environment is the daemon's without the
// variables named like credentials ([secret.Name]: KEY, SECRET, TOKEN,
// PASSWORD… in any case), plus what the binding passes explicitly (env=,
// pass-env=; for this program, the model's API key). Teardown is:
// session/close when advertised, close stdin, wait [Options.EOFGrace],
// SIGTERM to the group, wait [Options.TermGrace], SIGKILL to the group,
// reap. A child whose binding asks for a sandbox (and a child dshd, by
// default, when the daemon's commands have one) runs under tools/sandbox's
// helper, confined like a command to its workspace and its own writable
// dirs ([Options.Sandbox], sandbox.go; a child dshd's state dir among
// them, as [Options.StateDirOf] resolves it); the helper is then the process
// group's leader and passes its stdio through.
// On Linux the child also gets PR_SET_PDEATHSIG=SIGKILL, so it
// dies with the parent even when the parent is killed. The kernel sends
// that signal when the OS thread that forked the child exits, not the
// process, so children are forked from one dedicated goroutine locked to
// its own thread, which lives while any child it started does. The process
// group, the teardown and that thread are tools/subproc's; the run
// lifecycle and the progress summary are shared with spawn and fork
// through subagents/internal/runkit.
//
// # Goroutines
//
// Each run owns one goroutine for its prompt turn. Each connection owns the
// goroutines of its rpc.ClientSideConn, one watcher, and one goroutine per
// live terminal; a stdio child adds a stderr reader and a waiter. Dispose
// returns after a run's goroutines have ended; the last Dispose of a stdio
// child's runs reaps the process. Pooled socket connections live until
// [Provider.Close].
package acpprovider
