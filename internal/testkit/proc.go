package testkit

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Proc is one process as /proc/PID/stat shows it (Linux).
type Proc struct {
	PID, PPID, PGID int
	// State is the state letter: R running, S sleeping, Z zombie, X dead …
	State byte
	Comm  string
}

// Stat reads what /proc says of pid; ok is false once it is gone (or
// where there is no /proc).
func Stat(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	// The command name is in parentheses and may hold both spaces and ')'.
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Proc{}, false
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 3 {
		return Proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return Proc{PID: pid, PPID: ppid, PGID: pgid, State: f[0][0], Comm: string(b[open+1 : closing])}, true
}

// Ended reports whether the process had exited when it was read: a
// zombie nobody has reaped yet has.
func (p Proc) Ended() bool { return p.State == 'Z' || p.State == 'X' }

// Ended reports whether pid has exited: it is gone, or a zombie nobody
// has reaped yet.
func Ended(pid int) bool {
	p, ok := Stat(pid)
	return !ok || p.Ended()
}

// Processes reads every process of the system, by pid; it skips the test
// where there is no /proc.
func Processes(t testing.TB) map[int]Proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	all := map[int]Proc{}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := Stat(pid); ok {
				all[pid] = p
			}
		}
	}
	return all
}

// Descendants returns every process below pid (its children, theirs, and
// so on), zombies included, by pid.
func Descendants(t testing.TB, pid int) map[int]Proc {
	t.Helper()
	children := map[int][]Proc{}
	for _, p := range Processes(t) {
		children[p.PPID] = append(children[p.PPID], p)
	}
	out := map[int]Proc{}
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if _, seen := out[p.PID]; seen {
			continue
		}
		out[p.PID] = p
		queue = append(queue, children[p.PID]...)
	}
	return out
}
