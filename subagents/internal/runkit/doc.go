// Package runkit is the provider-independent machinery of a subagent run,
// shared by the in-process providers (subagents/internal/inproc, behind
// spawn and fork) and the acp provider (subagents/acp), so that both keep
// the seam's promises the same way:
//
//   - [Run] and [Runs]: a run ends once, Wait returns its [subagents.Result],
//     Dispose runs once; a child tracks its current run, the runs that
//     still hold it, and whether it is closed, which decides Resume.
//   - [ProgressSink]: the bounded progress summary shown in the parent's
//     tool call when the editor does not see the child, sent at most once
//     per interval plus a final one.
//   - Result helpers: [Cut], [FirstLine], [ScrubMessage], [ScrubOutput],
//     [IdleState], [RequestSchema] and [Structured], which turn a child's
//     end into a Result whose Diagnostic is at most [MaxDiagnostic] bytes
//     and never shows a credential; [Invalid], a request a provider
//     cannot serve.
//
// It imports subagents and the llm vocabulary only, never a provider, the
// agent loop or acp: what a provider's events look like stays in the
// provider, which folds them through the small [Summary] API.
//
// Goroutines: a ProgressSink owns at most one timer at a time, and Finish
// returns only after it has stopped or fired. Nothing else here starts a
// goroutine; compiled patterns are built on first use, not at program
// start.
package runkit
