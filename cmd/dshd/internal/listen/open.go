// open.go: turning a --listen address into a listener.

package listen

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
)

// Open opens the --listen address addr: "unix:PATH" creates a socket only
// its owner may use (0600), after removing a stale socket file and never
// touching another kind of file; "tcp:HOST:PORT" binds loopback when HOST
// is empty. Whether a tcp listener has a token is the caller's check.
func Open(addr string, log *slog.Logger) (net.Listener, error) {
	network, where, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("--listen %q: want unix:PATH or tcp:HOST:PORT", addr)
	}
	switch network {
	case "unix":
		return openUnix(addr, where, log)
	case "tcp":
		host, port, err := net.SplitHostPort(where)
		if err != nil {
			return nil, fmt.Errorf("--listen %q: %w", addr, err)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		return net.Listen("tcp", net.JoinHostPort(host, port))
	}
	return nil, fmt.Errorf("--listen %q: want unix:PATH or tcp:HOST:PORT", addr)
}

// IsTCP reports whether addr is a tcp --listen address.
func IsTCP(addr string) bool { return strings.HasPrefix(addr, "tcp:") }

func openUnix(addr, path string, log *slog.Logger) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("--listen unix: needs a path")
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("--listen %s: %s exists and is not a socket; not touching it", addr, path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("--listen %s: another daemon is listening there", addr)
		}
		log.Info("removing stale socket", "path", path)
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	l, err := listenPrivate(path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
