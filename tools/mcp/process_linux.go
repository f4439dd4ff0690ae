// This file tells a running process group from one with only zombies
// left, on Linux.

package mcp

import (
	"bytes"
	"os"
	"strconv"
)

// groupRunning reports whether a process of group pgid runs, zombies
// aside: where pid 1 does not reap orphans (many containers), a killed
// grandchild stays a zombie forever and kill(-pgid, 0) keeps succeeding.
func groupRunning(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// After the parenthesised command: state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
