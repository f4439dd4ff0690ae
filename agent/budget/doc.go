// Package budget counts what a delegation tree spends — tokens and model
// round trips — and bounds it.
//
// A [Meter] is one node of the tree: an agent's turn, a subagent run, a
// session an ACP parent bounded. A child meter charges itself and every
// ancestor, so a turn's count includes everything its subagents spent, in
// this process or, reported back, in another; and every bound on the way
// to the root binds the child. The agent calls [Meter.Begin] before each
// model call, which refuses the call once any bound has run out, and
// [Meter.Charge] after it.
//
// A meter is a chain of atomic counters: Begin and Charge take no lock and
// cost a few atomic operations per ancestor (a tree is a handful of levels
// deep, see subagents.DefaultMaxDepth). Siblings running at once may
// overshoot a token bound by the calls already under way when it ran out:
// a call's size is known only when it ends.
//
// The package imports only agent/llm and starts no goroutines.
package budget
