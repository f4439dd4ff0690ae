// Package conformance is dshd's ACP conformance suite: a library of cases
// that drives any ACP agent command over stdio with a fake client and
// reports, per item of the checklists in acp-v1.md and acp-subagents.md
// §15, whether the agent passes.
//
// # Pieces
//
// [Client] launches one agent process, speaks raw newline-delimited JSON
// to it, records every line both ways ([Line]), answers the agent's
// requests through per-method [Handler]s (permission answers, fs/* on the
// real disk, terminal/* that really run), and lets a case wait for what
// the agent sends ([Client.Await], [Client.Response], [Client.Barrier]).
// Every agent line also goes through checks that hold everywhere — the
// envelope, response ids, capability gates, update shapes, unknown
// session ids, tool-call and terminal bookkeeping, turn ordering — and a
// broken rule becomes a [Violation] that fails the case and its item.
//
// A [Case] is a Go function or a data file of `>>`/`<<` lines under
// testdata/cases (see script.go for the format). Cases name the checklist
// items they cover, the agent capabilities they need (an agent that does
// not advertise one skips the case), and whether they need dshd itself:
// those drive dshd's scripted model (testdata/scripts) and flags, and run
// only when the agent's initialize names it "dshd" and [Options].Dshd is
// set. [Run] runs the cases in parallel, each in its own temporary
// directory with its own processes; [WriteTable] prints one row per
// checklist item. [SchemaSet] validates recorded messages against the
// official JSON schema.
//
// # Rules the cases follow
//
// Assertions wait for messages under the case's watchdog context, never
// on elapsed time; "did not happen" is checked with a barrier request the
// agent must answer after everything it sent before. Nothing here writes
// to stdout.
//
// Goroutines: a Client owns one reader goroutine per process and one per
// agent request its handlers answer; all end when the process exits.
// Run owns one goroutine per running case and returns after all ended.
package conformance
