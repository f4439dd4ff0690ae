//go:build !unix

package definition_test

import "time"

// cpuTime is 0: there is no getrusage here, so the cpu-ms/op metric of the
// benchmarks reads 0 on this system.
func cpuTime() time.Duration { return 0 }
