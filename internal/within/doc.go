// Package within waits for a channel to close, up to a duration: how the
// daemon gives a child process, a reader or a peer a bounded grace to
// finish before it acts without them.
package within
