// Package piped starts a child process with pipes on its stdin and
// stdout, the way every client of an agent on stdio does: the conformance
// library, the bench and the demo. It imports nothing of the project.
package piped
