// runtime.go: the Go runtime's series a scraper expects of a Go process,
// read from runtime/metrics at each scrape.

package metrics

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The runtime/metrics samples writeRuntime reads, in this order.
var runtimeSamples = [...]string{
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/total:bytes",
	"/sched/threads/total:threads",
}

// writeRuntime writes the go_ families, in the order of their names.
func writeRuntime(w *writer) {
	var s [len(runtimeSamples)]metrics.Sample
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s[:])
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	goroutines, heapObjects, heapUnused, total, threads := v(0), v(1), v(2), v(3), v(4)

	// The pauses' quantiles, as the summary other Go programs export.
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	w.head(&meta{"go_gc_duration_seconds", "Stop-the-world pause of each garbage collection, in seconds.", "summary"})
	for i, q := range [...]string{"0", "0.25", "0.5", "0.75", "1"} {
		w.float("go_gc_duration_seconds", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	w.float("go_gc_duration_seconds_sum", gc.PauseTotal.Seconds())
	w.uint("go_gc_duration_seconds_count", uint64(gc.NumGC))

	w.head(&meta{"go_goroutines", "Goroutines that exist now.", "gauge"})
	w.uint("go_goroutines", goroutines)
	w.head(&meta{"go_info", "The Go version the binary was built with.", "gauge"})
	w.uint("go_info", 1, "version", runtime.Version())
	w.head(&meta{"go_memstats_alloc_bytes", "Bytes of heap objects allocated and not yet freed (/memory/classes/heap/objects:bytes).", "gauge"})
	w.uint("go_memstats_alloc_bytes", heapObjects)
	w.head(&meta{"go_memstats_heap_inuse_bytes", "Bytes of heap spans in use (/memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes).", "gauge"})
	w.uint("go_memstats_heap_inuse_bytes", heapObjects+heapUnused)
	w.head(&meta{"go_memstats_sys_bytes", "Bytes of memory the runtime got from the system (/memory/classes/total:bytes).", "gauge"})
	w.uint("go_memstats_sys_bytes", total)
	w.head(&meta{"go_threads", "OS threads the Go runtime owns now.", "gauge"})
	w.uint("go_threads", threads)
}
