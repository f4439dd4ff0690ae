// harness_test.go: a line-level fake agent served by the Handler on a real
// loopback HTTP server, and a minimal line-level client, so the tests see
// the transport and nothing else.

package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// lineConn writes whole lines under a lock.
type lineConn struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineConn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(append(b, '\n'))
	return err
}

// fakeAgent is the agent behind the Handler: initialize; session/new
// answers sessionId "s1" and then sends one update for it; session/prompt
// sends an update, asks session/request_permission, sends the answer's
// outcome as an update and answers end_turn; session/load replays
// params.replay updates (one "replayed" without it) and then answers;
// "flood" sends n notifications without a session; "echo" answers its
// params; "hold" stops reading until release is closed.
type fakeAgent struct {
	served  atomic.Int32
	mu      sync.Mutex
	ended   []chan struct{} // one per connection, closed when it ends
	opened  chan struct{}   // signalled per connection
	release chan struct{}
}

func newFakeAgent() *fakeAgent {
	return &fakeAgent{opened: make(chan struct{}, 64), release: make(chan struct{})}
}

func (a *fakeAgent) serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	a.served.Add(1)
	end := make(chan struct{})
	a.mu.Lock()
	a.ended = append(a.ended, end)
	a.mu.Unlock()
	a.opened <- struct{}{}
	defer close(end)
	stop := context.AfterFunc(ctx, func() { rwc.Close() })
	defer stop()
	out := &lineConn{w: rwc}
	var wg sync.WaitGroup
	defer wg.Wait()
	answers := map[string]chan rpcMsg{}
	var amu sync.Mutex
	br := bufio.NewReader(rwc)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil
		}
		var m rpcMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method == "" {
			amu.Lock()
			ch := answers[string(m.ID)]
			amu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		reply := func(result any) { _ = out.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		update := func(sid, text string) {
			_ = out.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}}})
		}
		switch m.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}})
		case "session/new":
			reply(map[string]any{"sessionId": "s1"})
			update("s1", "ready")
		case "session/load":
			var p struct {
				SessionID string
				Replay    int
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.Replay == 0 {
				update(p.SessionID, "replayed")
			}
			for i := range p.Replay {
				update(p.SessionID, fmt.Sprintf("replayed %d", i))
			}
			reply(map[string]any{})
		case "session/prompt":
			var p struct{ SessionID string }
			_ = json.Unmarshal(m.Params, &p)
			wg.Go(func() {
				update(p.SessionID, "working")
				ch := make(chan rpcMsg, 1)
				amu.Lock()
				answers["100"] = ch
				amu.Unlock()
				_ = out.send(map[string]any{"jsonrpc": "2.0", "id": 100, "method": "session/request_permission", "params": map[string]any{"sessionId": p.SessionID, "toolCall": map[string]any{"toolCallId": "t1"}, "options": []any{}}})
				select {
				case ans := <-ch:
					update(p.SessionID, "permission: "+string(ans.Result))
					reply(map[string]any{"stopReason": "end_turn"})
				case <-ctx.Done():
				}
			})
		case "flood":
			var n int
			_ = json.Unmarshal(m.Params, &n)
			wg.Go(func() {
				for i := range n {
					if out.send(map[string]any{"jsonrpc": "2.0", "method": "noise", "params": map[string]any{"i": i, "pad": string(make([]byte, 200))}}) != nil {
						return
					}
				}
			})
		case "echo":
			reply(m.Params)
		case "hold":
			select {
			case <-a.release:
			case <-ctx.Done():
			}
		case "bye":
			// The agent's last words, then it ends the connection.
			update("s1", "bye")
			reply("bye")
			return nil
		}
	}
}

// connEnded returns the channel closed when the i-th served connection
// ends.
func (a *fakeAgent) connEnded(i int) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ended[i]
}

// newServer serves a fake agent behind a Handler on loopback.
func newServer(t *testing.T, o Options) (*fakeAgent, *Handler, string) {
	t.Helper()
	a, h, srv := serveFakeAgent(t, o, nil)
	return a, h, srv.URL + "/acp"
}

// serveFakeAgent serves a fake agent behind a Handler on a loopback server
// that configure, when set, adjusts before it starts; the test's end closes
// both.
func serveFakeAgent(t *testing.T, o Options, configure func(*httptest.Server)) (*fakeAgent, *Handler, *httptest.Server) {
	t.Helper()
	a := newFakeAgent()
	o.Serve = a.serve
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	if configure != nil {
		configure(srv)
	}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Watchdog)
		defer cancel()
		_ = h.Close(ctx)
		srv.Close()
	})
	return a, h, srv
}

// client is a line-level JSON-RPC client over a dialled connection; the
// agent's requests are answered by onRequest.
type client struct {
	t    testing.TB
	out  *lineConn
	rwc  io.ReadWriteCloser
	next atomic.Int64

	mu        sync.Mutex
	pending   map[string]chan rpcMsg
	notes     []rpcMsg
	changed   chan struct{}
	done      chan struct{}
	onRequest func(m rpcMsg) any
}

func newClient(t testing.TB, rwc io.ReadWriteCloser, onRequest func(rpcMsg) any) *client {
	c := &client{t: t, out: &lineConn{w: rwc}, rwc: rwc, pending: map[string]chan rpcMsg{}, changed: make(chan struct{}), done: make(chan struct{}), onRequest: onRequest}
	go c.read()
	t.Cleanup(func() {
		rwc.Close()
		<-c.done
	})
	return c
}

func (c *client) read() {
	defer close(c.done)
	br := bufio.NewReader(c.rwc)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpcMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil:
			var res any = map[string]any{}
			if c.onRequest != nil {
				res = c.onRequest(m)
			}
			_ = c.out.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		case m.Method != "":
			c.mu.Lock()
			c.notes = append(c.notes, m)
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		default:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// call sends a request and waits for its answer.
func (c *client) call(ctx context.Context, method string, params any) (rpcMsg, error) {
	id := c.next.Add(1)
	ch := make(chan rpcMsg, 1)
	c.mu.Lock()
	c.pending[strconv.FormatInt(id, 10)] = ch
	c.mu.Unlock()
	if err := c.out.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return rpcMsg{}, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		return rpcMsg{}, fmt.Errorf("%s: the connection ended", method)
	case <-ctx.Done():
		return rpcMsg{}, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *client) mustCall(ctx context.Context, method string, params any) json.RawMessage {
	c.t.Helper()
	m, err := c.call(ctx, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	if m.Error != nil {
		c.t.Fatalf("%s: %s", method, m.Error)
	}
	return m.Result
}

// texts returns the text of every session/update received for sid.
func (c *client) texts(sid string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.notes {
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Content struct{ Text string } `json:"content"`
			} `json:"update"`
		}
		if n.Method == "session/update" && json.Unmarshal(n.Params, &p) == nil && p.SessionID == sid {
			out = append(out, p.Update.Content.Text)
		}
	}
	return out
}

// waitText waits until an update for sid carries text.
func (c *client) waitText(ctx context.Context, sid, text string) {
	c.t.Helper()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		for _, s := range c.texts(sid) {
			if s == text {
				return
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			c.t.Fatalf("no update %q for %s; got %q", text, sid, c.texts(sid))
		}
	}
}
