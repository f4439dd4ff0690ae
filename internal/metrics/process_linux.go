// process_linux.go: the process_ series, read from /proc/self and the
// kernel at each scrape.

package metrics

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"syscall"
)

// userHZ is the unit of the clock ticks /proc reports: the kernel fixes it
// at 100 for user space on every architecture Go supports.
const userHZ = 100

// writeProcess writes the process_ families, in the order of their names;
// a series whose source cannot be read is left out.
func writeProcess(w *writer) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		w.head(&meta{"process_cpu_seconds_total", "User and system CPU time the process spent, in seconds.", "counter"})
		w.float("process_cpu_seconds_total", cpu)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		w.head(&meta{"process_max_fds", "The most file descriptors the process may open (the soft limit).", "gauge"})
		w.uint("process_max_fds", lim.Cur)
	}
	if n, err := openFDs(); err == nil {
		w.head(&meta{"process_open_fds", "File descriptors the process has open.", "gauge"})
		w.uint("process_open_fds", n)
	}
	st, err := readStat()
	if err != nil {
		return
	}
	w.head(&meta{"process_resident_memory_bytes", "Resident set size of the process, in bytes.", "gauge"})
	w.uint("process_resident_memory_bytes", st.rssPages*uint64(os.Getpagesize()))
	if boot, err := bootTime(); err == nil {
		w.head(&meta{"process_start_time_seconds", "When the process started, in seconds since the Unix epoch.", "gauge"})
		w.float("process_start_time_seconds", float64(boot)+float64(st.startTicks)/userHZ)
	}
	w.head(&meta{"process_virtual_memory_bytes", "Virtual memory size of the process, in bytes.", "gauge"})
	w.uint("process_virtual_memory_bytes", st.vsize)
}

// openFDs counts the entries of /proc/self/fd (the one it reads with
// among them).
func openFDs() (uint64, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	var n uint64
	for {
		names, err := d.Readdirnames(256)
		n += uint64(len(names))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

type procStat struct{ startTicks, vsize, rssPages uint64 }

// readStat reads the start time, virtual size and resident pages from
// /proc/self/stat (proc(5)): the fields after the command name, which is
// in parentheses and may itself hold spaces and parentheses.
func readStat() (procStat, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, strconv.ErrSyntax
	}
	// f[0] is field 3 (state); starttime, vsize and rss are fields 22-24.
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 {
		return procStat{}, strconv.ErrSyntax
	}
	var st procStat
	for _, p := range [...]struct {
		field int
		v     *uint64
	}{{22, &st.startTicks}, {23, &st.vsize}, {24, &st.rssPages}} {
		if *p.v, err = strconv.ParseUint(string(f[p.field-3]), 10, 64); err != nil {
			return procStat{}, err
		}
	}
	return st, nil
}

// bootTime reads the btime line of /proc/stat: when the system booted, in
// seconds since the Unix epoch.
func bootTime() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, strconv.ErrSyntax
}
