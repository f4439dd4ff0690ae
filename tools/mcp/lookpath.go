// This file finds a stdio server's program by name in the PATH of the
// environment the server gets, not only in ours.

package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// lookPath returns the program a stdio server's command names. A command
// with a separator is a path and is returned as is (a relative one is
// relative to the server's working directory, as os/exec has it). A bare
// name is looked up in env's PATH — the server's own environment, which
// an entry may set — in order; relative PATH entries are skipped, so a
// program is never picked up from wherever the daemon happens to run.
func lookPath(command string, env []string) (string, error) {
	if strings.ContainsRune(command, filepath.Separator) {
		return command, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, command)
		if executable(p) {
			return p, nil
		}
	}
	if path == "" {
		return "", fmt.Errorf("cannot find %s: the server's environment has no PATH; give the command's absolute path", command)
	}
	return "", fmt.Errorf("cannot find %s in the server's PATH; install it or give the command's absolute path", command)
}

// executable reports whether p is a regular file someone may execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
