// Package sameprogram tells whether a command names a given program: the
// acp provider and agent definitions both ask whether a child agent's
// command is the running dshd (a child dshd, which gets dshd's own
// sandbox), and must answer alike.
package sameprogram

import (
	"os"
	"os/exec"
)

// Is reports whether command, a path or a name looked up on PATH, is the
// program at path: the same file, whatever links lead to it.
func Is(command, path string) bool {
	found, err := exec.LookPath(command)
	if err != nil {
		return false
	}
	a, err := os.Stat(found)
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}
