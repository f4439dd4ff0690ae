// This file decides which paths control what runs rather than hold the
// project's work: an edit of them is asked about like a command.

package workspace

import (
	"os"
	"path/filepath"
	"strings"
)

// controlNames are path elements whose contents make programs run: git
// reads .git/config (core.fsmonitor, core.hooksPath, aliases) and runs
// .git/hooks on ordinary commands like `git status`, so writing there is
// running code; .dshd holds dshd's own project settings.
var controlNames = []string{".git", ".dshd"}

// IsControl reports whether an edit of the resolved path p would change
// what runs: p is or lies under a .git or .dshd directory (of the project
// or of any repository nested in it; a .git file, which points git at
// another directory, counts too), or under dshd's own configuration or
// state directory ($XDG_CONFIG_HOME/dshd, $XDG_STATE_HOME/dshd and their
// defaults below the home directory), which a workspace may contain when
// it is the home directory. Names compare case-insensitively, since
// .GIT is .git on the file systems that fold case.
func IsControl(p string) bool {
	p = filepath.Clean(p)
	for _, elem := range strings.Split(filepath.ToSlash(p), "/") {
		for _, n := range controlNames {
			if strings.EqualFold(elem, n) {
				return true
			}
		}
	}
	for _, d := range dshdDirs() {
		if _, ok := within(p, d); ok {
			return true
		}
	}
	return false
}

// dshdDirs are dshd's configuration and state directories as it finds
// them by default (cmd/dshd's config file, agent/session's DefaultDir).
// They are read from the environment on each call: that costs no system
// call, and tests may change it.
func dshdDirs() []string {
	var dirs []string
	home, _ := os.UserHomeDir()
	for _, v := range [][2]string{{"XDG_CONFIG_HOME", ".config"}, {"XDG_STATE_HOME", filepath.Join(".local", "state")}} {
		base := os.Getenv(v[0])
		if !filepath.IsAbs(base) {
			if home == "" {
				continue
			}
			base = filepath.Join(home, v[1])
		}
		dirs = append(dirs, filepath.Join(base, "dshd"))
	}
	return dirs
}
