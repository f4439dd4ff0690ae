package rpc

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/dshd/dshd/internal/testkit"
)

// A queued message keeps what its line holds until it is handled, so it
// must count that against MaxQueuedInput: a long id (kept twice, as the
// id and as the key of the pending request) or members the agent never
// reads (kept while the params are a slice of the line). Counted by its
// params alone, a message with a 32 KiB id or 32 KiB of padding counted
// 1 KiB, and a peer that did not read its answers got 32 times the bound
// read and held.
func TestQueuedInputCountsWhatItsMessagesKeep(t *testing.T) {
	pad := strings.Repeat("x", 32<<10)
	for name, line := range map[string]string{
		"a long id":      `{"jsonrpc":"2.0","id":"` + pad + `","method":"x/unknown"}`,
		"unread members": `{"jsonrpc":"2.0","id":1,"method":"x/unknown","params":{},"pad":"` + pad + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const maxIn = 256 << 10
				before := testkit.LiveHeap()
				agentEnd, peer := net.Pipe()
				a := &fakeAgent{}
				a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Limits: Limits{WriteTimeout: -1, MaxQueuedOutput: 64 << 10, MaxQueuedInput: maxIn}})
				sent := make(chan int)
				go func() {
					b := []byte(line + "\n")
					n := 0
					for {
						if _, err := peer.Write(b); err != nil {
							sent <- n
							return
						}
						n += len(b)
					}
				}()
				synctest.Wait() // the writer is blocked: the agent stopped reading
				// What the connection holds now: the input queue (maxIn),
				// the answers waiting to go (64 KiB, and one answer beyond
				// it), the reader's buffer and the line it holds.
				held := testkit.LiveHeap() - before
				peer.Close()
				n := <-sent
				<-a.conn.Done()
				t.Logf("%d KiB read, %d KiB held", n>>10, held>>10)
				if held > 4*maxIn {
					t.Errorf("the agent held %d KiB of requests whose answers nobody read, with %d KiB of queued input allowed", held>>10, maxIn>>10)
				}
			})
		})
	}
}

// warnedAgent starts an agent side over a net.Pipe whose log keeps
// warnings and up, as the daemon's does by default: logs holds them, and
// peer is the other end.
func warnedAgent() (a *fakeAgent, peer net.Conn, logs *testkit.SyncBuffer) {
	logs = &testkit.SyncBuffer{}
	agentEnd, peer := net.Pipe()
	a = &fakeAgent{}
	a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return a, peer, logs
}

// Bad input is answered (or dropped) line by line, but logged at warning
// level only the first time each kind of it comes from a connection:
// before, every line of a peer's garbage was a warning of its own, a
// 10-byte line making 76 bytes of log, so a peer could fill the disk the
// daemon's log goes to. The rest are debug lines.
func TestBadInputIsWarnedOfOncePerKindAndConnection(t *testing.T) {
	a, peer, logs := warnedAgent()
	go drain(peer)
	kinds := []string{
		`{not json`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`,
		`{"jsonrpc":"2.0","id":777,"result":{}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
	}
	for range 100 {
		for _, k := range kinds {
			if _, err := io.WriteString(peer, k+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	peer.Close()
	<-a.conn.Done()
	lines := strings.Count(logs.String(), "\n")
	if lines > 2*len(kinds) {
		t.Errorf("%d lines of bad input made %d warnings, want one a kind:\n%.3000s", 100*len(kinds), lines, logs.String())
	}
	if lines < 3 {
		t.Errorf("bad input was not warned of:\n%s", logs.String())
	}
}

// A notification whose params do not decode has no answer to carry the
// error, so it is logged; before, each one was a warning of its own (50k
// session/cancel notifications with a wrong member made 50k lines, 7.3
// MB of log). Like other bad input it is a warning the first time on a
// connection, then debug lines.
func TestNotificationsWithBadParamsAreWarnedOfOncePerConnection(t *testing.T) {
	a, testEnd, logs := warnedAgent()
	p := newLinePeer(t, testEnd)
	p.initialize()
	for i := range 1000 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%d}}`, i))
	}
	// Notifications are handled in order: once this answer is out, every
	// one of them was.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"logout"}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	testEnd.Close()
	<-a.conn.Done()
	if got := strings.Count(logs.String(), "level=WARN"); got != 1 {
		t.Errorf("1000 notifications with bad params made %d warnings, want 1:\n%.2000s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "session/cancel") {
		t.Errorf("the warning does not name the method:\n%s", logs.String())
	}
	if n := len(a.cancelledSessions()); n != 0 {
		t.Errorf("%d notifications with bad params reached the agent", n)
	}
}
