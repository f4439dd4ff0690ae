// This file finds a process's descendants in /proc.

package sandbox

import (
	"bytes"
	"os"
	"strconv"
)

// descendants returns the pids of every process below pid, from the
// parent links /proc shows at this moment.
func descendants(pid int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, n := range names {
		child, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(child); ok {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// parentOf reads a process's parent from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the parenthesised command: state ppid ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
