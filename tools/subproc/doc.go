// Package subproc has one job: run a child process in a process group of
// its own and end that group completely. Commands (tools/localrun, through
// tools/sandbox), MCP stdio servers (tools/mcp) and acp subagent children
// (subagents/acp) use it, each keeping only what is its own: how it reads
// the child's output and how it words an exit.
//
// [Start] starts a command with its stdin, stdout and stderr on pipes the
// caller owns, in its own group (optionally its own session), and reaps it
// on a goroutine; [Child.Stop] is the polite-then-firm teardown: close
// stdin, wait a grace period, SIGTERM to the group, wait, SIGKILL to the
// group, reap, and then end whatever the leader left behind in its group.
// [Launch] and [Group] serve a caller that sets the command's streams up
// and waits for it itself (through exec.CommandContext, say).
//
// A group counts as alive only while a member runs: where pid 1 does not
// reap orphans (many containers), a dead grandchild stays a zombie forever
// and kill(-pgid, 0) keeps succeeding, so on Linux the members' states are
// read from /proc. [Descendants] reads from there too the tree below a
// process, for a subreaper that ends what it inherited (the sandbox
// helper).
//
// On Linux a child may be tied to this process with the parent-death
// signal ([Options.DieWithParent]). The kernel sends it when the OS thread
// that forked the child exits, not the process, and Go may end any thread
// a goroutine locked and left; so such children are forked from one
// goroutine locked to a thread of its own, which lives while any child it
// forked is unreaped and ends with the last one.
//
// Unix specifics live in _unix.go and _linux.go files; elsewhere there are
// no groups and only the child itself is killed.
//
// It imports nothing of dshd. Goroutines: each started Child has one
// reaper, which ends when the child has exited; the forking goroutine
// above ends with the last child it forked.
package subproc
