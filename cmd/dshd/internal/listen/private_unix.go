//go:build unix

package listen

import (
	"net"
	"syscall"
)

// listenPrivate creates the unix socket at path with no permission for
// group or others from its first moment (the umask), before the chmod
// that follows makes it exactly 0600.
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
