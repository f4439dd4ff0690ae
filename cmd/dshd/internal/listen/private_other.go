//go:build !unix

package listen

import "net"

// listenPrivate creates the unix socket at path; without a umask the
// chmod that follows is what restricts it.
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
