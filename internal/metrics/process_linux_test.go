package metrics

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestProcess_SeriesReadFromProcSelf(t *testing.T) {
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	before, _ := scrape(t, srv.URL)

	// Ten more open files show as ten more descriptors.
	dir := t.TempDir()
	for i := range 10 {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	after, _ := scrape(t, srv.URL)
	if d := gaugeOf(t, after, "process_open_fds") - gaugeOf(t, before, "process_open_fds"); d != 10 {
		t.Errorf("open fds grew by %v with 10 files opened", d)
	}

	rss, vsize := gaugeOf(t, after, "process_resident_memory_bytes"), gaugeOf(t, after, "process_virtual_memory_bytes")
	if rss < 1<<20 || vsize < rss {
		t.Errorf("resident %v bytes, virtual %v bytes", rss, vsize)
	}
	if heap := gaugeOf(t, after, "go_memstats_heap_inuse_bytes"); heap <= 0 || heap > gaugeOf(t, after, "go_memstats_sys_bytes") {
		t.Errorf("heap in use %v, sys %v", heap, gaugeOf(t, after, "go_memstats_sys_bytes"))
	}
	// The start time has a clock tick's precision and the boot time a
	// second's.
	start := time.Unix(0, int64(gaugeOf(t, after, "process_start_time_seconds")*1e9))
	if since := time.Since(start); since < -2*time.Second || since > time.Hour {
		t.Errorf("process started at %v, %v ago", start, since)
	}
	if max := gaugeOf(t, after, "process_max_fds"); max < gaugeOf(t, after, "process_open_fds") {
		t.Errorf("max fds %v below the open ones", max)
	}
	if cpu := counterOf(t, after, "process_cpu_seconds_total", "", ""); cpu <= 0 {
		t.Errorf("cpu seconds %v", cpu)
	}
}
