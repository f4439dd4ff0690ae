package testkit

import "runtime"

// LiveHeap returns the bytes of live heap objects, after a collection:
// what a test that bounds what is held compares before and after.
func LiveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
