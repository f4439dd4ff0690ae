//go:build linux

// End-to-end test of the last step of an http(s) listener's shutdown:
// the connections get --close-timeout to end, writing what they still
// have. Before it was a setting, the wait was a fixed 5 s, and a client
// that read none of its last answers held the shutdown that long without
// a word in the log.

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wsFrame is a masked client text frame holding payload (a zero mask,
// which leaves the payload as it is).
func wsFrame(payload []byte) []byte {
	f := []byte{0x81, 0x80 | 127}
	f = binary.BigEndian.AppendUint64(f, uint64(len(payload)))
	f = append(f, 0, 0, 0, 0)
	return append(f, payload...)
}

// A WebSocket client whose answer of 8 MiB the daemon is writing, and
// which reads none of it, is cut off at --close-timeout when the daemon
// stops, and the cut is logged naming the setting.
func TestRemote_AShutdownCutsOffAWebSocketThatReadsNothingAtTheCloseTimeout(t *testing.T) {
	p, u := serveHTTP(t, nil, "http://127.0.0.1:0", "--close-timeout", "300ms")
	host := hostOf(u)
	nc := dialSmallWindow(t, host)
	fmt.Fprintf(nc, "GET /acp HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", host)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade: %v %v", resp, err)
	}
	// A request whose id the answer echoes: far more than the daemon's
	// send buffer and ours hold.
	id := strings.Repeat("z", 8<<20)
	if _, err := nc.Write(wsFrame([]byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"x/unknown"}`))); err != nil {
		t.Fatal(err)
	}
	// The first byte of the answer: the daemon is writing it now, and
	// will not be done while nobody reads.
	if _, err := io.ReadFull(br, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p.signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(guardOf(t), 4*time.Second)
	defer cancel()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}
	if got := linesWith(p.stderr, "cut off the connections", "setting=--close-timeout", "timeout=300ms"); len(got) != 1 {
		t.Errorf("%d lines say the connection was cut off, want 1:\n%s", len(got), p.stderr)
	}
}
