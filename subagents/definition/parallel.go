// This file spreads independent work over the cores: reading a hundred
// definitions at session/new is parsing and schema compiling, all CPU.

package definition

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel calls fn(i) for every i below n on up to GOMAXPROCS goroutines
// and returns when all calls have returned. Small batches run inline.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/4)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
