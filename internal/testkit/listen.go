package testkit

import (
	"net"
	"testing"
)

// Loopback listens on a TCP port of 127.0.0.1 and accepts and closes every
// connection: something a sandbox test dials to learn whether a process
// reached dshd's side of the network. It is closed at the test's end.
func Loopback(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}
