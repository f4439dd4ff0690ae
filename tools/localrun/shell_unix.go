//go:build unix

package localrun

// defaultShell runs a command line.
const defaultShell = "/bin/sh"
