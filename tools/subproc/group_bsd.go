//go:build unix && !linux

// This file is the fallback of the Linux specifics on other unix systems.

package subproc

import "syscall"

// setDeathSignal has no equivalent here: a child outlives a parent killed
// by SIGKILL (Stop still tears it down).
func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}

const deathSignalNeedsThread = false

// groupRunning cannot tell zombies from running processes without /proc;
// a group that answers kill(-pgid, 0) is taken as running.
func groupRunning(int) bool { return true }

// awaitExit returns at once: the caller's wait both waits and reaps.
func awaitExit(int) {}
