// This file reads the processes /proc lists: for telling a running group
// from one that only has zombies left, and for the tree below a process.

package subproc

import (
	"bytes"
	"os"
	"strconv"
)

// proc is one process as /proc/PID/stat shows it.
type proc struct {
	pid, ppid, pgrp int
	state           byte // R running, S sleeping, Z zombie, X dead …
}

// procs reads every process /proc lists at this moment; one that ends
// while it reads is left out.
func procs() ([]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	out := make([]proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// readProc reads /proc/PID/stat.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// Fields after the parenthesised command: state ppid pgrp ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]}, true
}

// Descendants returns the pids of every process below pid, from the
// parent links /proc shows at this moment (none where it cannot be read):
// what a subreaper that ends everything it inherited signals.
func Descendants(pid int) []int {
	all, err := procs()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p.pid)
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
