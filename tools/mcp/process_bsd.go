//go:build unix && !linux

// This file is the fallback of groupRunning where there is no /proc.

package mcp

// groupRunning cannot tell zombies from running processes without /proc;
// a group that answers kill(-pgid, 0) is taken as running.
func groupRunning(int) bool { return true }
