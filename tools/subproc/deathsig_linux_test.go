package subproc

import "syscall"

// deathSignalOf is the parent-death signal attr asks for.
func deathSignalOf(attr *syscall.SysProcAttr) syscall.Signal { return attr.Pdeathsig }
