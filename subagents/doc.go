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
// # Cancelled before it began
//
// A cancelled turn never produces work or a success. A provider given a
// context that has already ended starts no child: Start returns a run
// that settled aborted. And a run cancelled before its owner waited for it
// settles aborted without running: the in-process providers begin a
// child's turn with the owner's first Wait, not in Start, because Go has
// no "same tick" — a turn begun in Start could finish before a Cancel the
// caller makes on the very next line, which the seed's cancel-before-start
// contract forbids. Such a run is [Settling], so the Service follows it
// through Done without waiting on the owner's behalf.
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
// The seed promises that a start observer can still reach the live child
// through the agent registry its sessions share (agent.Registry.Get of
// the event's RunID). Delivered detached, a start may reach an observer
// after a fast child has finished and been disposed, so the Service keeps
// the child reachable: a [Reachable] run (an in-process one) is held while
// its start event is queued for, or being seen by, any observer, and its
// child leaves the registry when the last of them is done with it
// (returned, panicked or unsubscribed) — or at Dispose when nobody
// observes. Dispose still stops the child and returns at once; only the
// registry entry outlives it. We chose this over carrying a handle to the
// child in the event because the seed's sentence is about the registry: a
// handle would have left observers able to work while the lookup the seed
// names still failed. The cost is that an observer stuck on a start keeps
// that child (idle, its turn over) listed and in memory until it returns
// or is stopped. A run that settled before any child existed (an
// already-cancelled Start) has nothing to reach.
//
// # Goroutines
//
// The Service owns one goroutine per observer while events are queued for
// it (it exits when the queue is empty) and one watcher per run, which
// exits when the run settles; Dispose returns after it. The last observer
// done with a start event releases the run's child on its own goroutine.
package subagents
