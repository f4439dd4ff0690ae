//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// Main is the helper's entry point; there is no helper on this system.
func Main([]string) int {
	fmt.Fprintln(os.Stderr, "dshd sandbox: not available on "+runtime.GOOS)
	return 2
}
