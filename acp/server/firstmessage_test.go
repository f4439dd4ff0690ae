package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// bufferedPeer is a client whose whole input is there before the server
// starts: the first handlers run the moment the connection reads.
type bufferedPeer struct {
	*strings.Reader
	testkit.SyncBuffer
}

func (p *bufferedPeer) Close() error { return nil }

// TestMessagesWaitingBeforeTheConnectionStartsAreServed runs session/new
// (whose handler sends session/update) on input that is already waiting
// when the connection is made; under -race it failed while the connection
// began reading before the server had stored it.
func TestMessagesWaitingBeforeTheConnectionStartsAreServed(t *testing.T) {
	h := newHarness(t, hopts{})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(must(json.Marshal(h.cwd))) + `,"mcpServers":[]}}` + "\n"
	p := &bufferedPeer{Reader: strings.NewReader(in)}
	if err := h.srv.ServeConn(testkit.Context(t), p); err != nil {
		t.Fatal(err)
	}
	out := p.String()
	if !strings.Contains(out, `"id":2,"result":{"sessionId":"`) || !strings.Contains(out, `"method":"session/update"`) {
		t.Fatalf("want the session/new answer and its session/update, got:\n%s", out)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
