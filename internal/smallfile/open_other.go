//go:build !unix

// This file holds the open flag where there are no FIFOs in a tree.

package smallfile

// nonblock is nothing: off unix a named pipe is not a file of a
// directory tree, so an open does not wait for one.
const nonblock = 0
