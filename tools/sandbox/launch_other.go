//go:build !linux

// This file is dshd's side elsewhere: there is no Landlock and no helper,
// so commands run directly and only the fallback decides whether they run.

package sandbox

import (
	"os/exec"
	"runtime"
)

// selfExe names this binary for a helper that is never started here.
const selfExe = "dshd"

func setNamespaces(*exec.Cmd, bool, bool, bool) bool { return false }

func probe(*Config) support {
	return support{why: "commands cannot be confined on " + runtime.GOOS + " (Landlock is Linux only)"}
}
