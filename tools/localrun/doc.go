// Package localrun runs the commands of tools (run_command, and the
// terminals an acp child asks its parent for) on the local machine: each
// under the sandbox ([sandbox.Sandbox]) in a session and process group of
// its own, with the environment a cmdenv.Policy allows, its merged output
// streamed while it runs and capped to a tail, and everything it started
// ended on timeout, cancel and exit.
//
// Goroutines: one per running command, reading its output; it ends when
// the command and everything it left behind are gone (or after the kill
// grace, for a process that escaped).
package localrun
