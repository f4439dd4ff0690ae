//go:build unix && !linux

// This file is the fallback of the Linux specifics on other unix systems.

package acpprovider

import "syscall"

// setDeathSignal has no equivalent here: a child outlives a parent killed
// by SIGKILL (a clean stop still tears it down).
func setDeathSignal(*syscall.SysProcAttr) {}

const deathSignalNeedsThread = false

// groupRunning cannot tell zombies apart without /proc.
func groupRunning(int) bool { return true }
