// Package inproc is the in-process child machinery shared by the spawn and
// fork providers: it builds the child (its agent, scope, environment and
// system prompt), runs its turn on a goroutine owned by the run, maps the
// turn's outcome onto the seam's [subagents.Result], and shows the child to
// the editor through [subagents.Exposure] or, without one, as bounded
// progress of the parent's tool call.
//
// spawn and fork are thin configurations of [Provider]; they import this
// package and never each other. What a run shares with the acp provider —
// its end-once lifecycle, the progress summary's batching, the result and
// diagnostic helpers — lives in subagents/internal/runkit.
//
// Goroutines: each run owns one goroutine for its turn (and, without
// exposure, at most one progress timer at a time). Dispose cancels the
// turn and returns only after that goroutine, the timer and everything the
// child started have ended.
package inproc
