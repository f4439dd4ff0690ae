//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSKB is an ended process's peak resident set in KiB, from wait4's
// rusage (which counts bytes on darwin, KiB elsewhere); 0 without one.
func maxRSSKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
