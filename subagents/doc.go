// Package subagents is the subagent seam: the vocabulary an agent uses to
// delegate work to a child agent, and the [Service] that holds the
// providers able to run one.
//
// A [Provider] is one transport for running a child: subagents/spawn (a
// fresh in-process child), subagents/fork (an in-process child seeded with
// the parent's completed turns) and subagents/acp (another ACP agent
// process). Providers import this package and never each other; this
// package imports no provider. Several providers coexist in one Service,
// each under its own name, and a caller picks one by name.
//
// [Service.Start] checks everything it can before any child exists — the
// provider, each start-time capability the request uses, the depth limit —
// and only then asks the provider. The [Run] it returns must be disposed
// on every path. A child-level failure is a [Result] with [StopError],
// never an error from Wait. Runtime capabilities are optional interfaces
// probed by type assertion: [Steerable], [Resumable].
//
// # Scope
//
// A [Scope] is what an agent delegates from: the providers' [Service], the
// editor's id for the agent's session, its depth and the subtree's limit,
// the editor's view of children ([Exposure]) and the delegating
// agent/session. It is a session's delegation (session.Config.Delegation):
// when the session is built it calls [Scope.Attach], which binds every
// [Delegator] in the session's tool set — the subagent tool, registered
// once for the whole daemon — to that Scope, so the tool gets its caller's
// Scope typed, per session, and never looks it up at call time. An
// in-process child is built from Scope.Session; an out-of-process child
// is lent what Attach copied (cwd, roots, environment, MCP entries).
//
// # Events
//
// [Service.Observe] delivers [Event]s: subagent/start after a successful
// Start, subagent/end exactly once when a run settles (its Wait observed
// the end, or it was disposed), and provider-added / provider-removed when
// the registry changes. Observers are observe-only and run detached: each
// observer has its own queue and goroutine, so none can block a run, its
// caller or another observer; a panicking observer is contained and
// logged; no event is dropped while subscribed, an end event included;
// and each observer gets its own deep copy of the end event's
// LastMessage, so no observer can change what the caller receives.
//
// # Goroutines
//
// The Service owns one goroutine per observer while events are queued for
// it (it exits when the queue is empty) and one watcher per run, which
// exits when the run settles; Dispose returns after it.
package subagents
