// Package inproc is the in-process child machinery shared by the spawn and
// fork providers: it builds the child as a session — through session.New,
// from the parent session's ChildConfig, with what the request and the
// provider change (its tools, model, limits, depth, permission gate and
// delegation scope) — runs its turn on a goroutine owned by the run
// (launched by the owner's first Wait, so a Cancel before that settles it
// aborted without running; see the subagents package doc), maps
// the turn's outcome onto the seam's [subagents.Result], and shows the
// child to the editor through [subagents.Exposure] or, without one, as
// bounded progress of the parent's tool call.
//
// What makes a child a fork or a fresh child is not here: each provider
// passes a [Config.Begin] that returns its history, system prompt source
// and task framing (subagents/fork: the parent's shared prefix and system
// prompt; subagents/spawn: an empty conversation and its own system
// prompt). spawn and fork import this package and never each other. What a
// run shares with the acp provider — its end-once lifecycle, the progress
// summary's batching, the result and diagnostic helpers — lives in
// subagents/internal/runkit.
//
// Goroutines: each run owns one goroutine for its turn (and, without
// exposure, at most one progress timer at a time). Dispose cancels the
// turn and returns only after that goroutine, the timer and everything the
// child started have ended. The child's session is closed by the last
// release — its last run's Dispose, or the service's last start observer
// letting go of it (the child stays in the agent registry until then).
package inproc
