//go:build unix && !linux

package subproc

import "syscall"

// deathSignalOf is 0: there is no parent-death signal to ask for here.
func deathSignalOf(*syscall.SysProcAttr) syscall.Signal { return 0 }
