// Package testkit holds what the tests of many packages of the module
// share, so that each of these jobs is written once: waits bounded by one
// [Watchdog] that fail a deadlocked test with every goroutine's stack
// ([Context], [Await], [Within]); a buffer that concurrent writers such
// as a logger may share with the test that reads it ([SyncBuffer]); files
// in a temporary tree ([Write], [Read]), on unix also a FIFO and a link
// to /dev/zero ([FIFO], [LinkToZero]), and a directory with a short
// path ([ShortDir]); the reference JSON encoding a
// hand-written encoder is compared with ([EncodeJSON]); a loopback port
// that accepts and closes ([Loopback]); the test binary's path for a
// command that runs it ([Executable]); the live heap after a collection
// ([LiveHeap]); and, on Linux,
// the processes /proc shows ([Stat], [Ended], [Processes],
// [Descendants]).
//
// It is test support: only _test.go files and the other test-support
// packages (tools/internal/tooltest, subagents/subagenttest,
// agent/llm/llmtest) import it, and it imports nothing of the project.
package testkit
