// This file is a raw JSON-RPC client for the end-to-end tests: it writes
// lines, reads every line the daemon writes, checks that each one is
// exactly one JSON-RPC message (stdout purity), matches responses to calls
// and records notifications in arrival order.

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// rpcErr is a JSON-RPC error object.
type rpcErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcErr) Error() string { return fmt.Sprintf("%d %s %s", e.Code, e.Message, e.Data) }

// msg is one message the daemon wrote.
type msg struct {
	raw    []byte
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcErr         `json:"error"`
}

// note is a session/update notification, decoded enough to filter on.
type note struct {
	SessionID string
	Kind      string
	Update    json.RawMessage
	Params    json.RawMessage
}

// requestHandler answers a request the daemon makes; it runs on its own
// goroutine. It returns the result or an error.
type requestHandler func(m *msg) (any, *rpcErr)

// wire is a raw JSON-RPC client over one connection.
type wire struct {
	t      testing.TB
	closer io.Closer
	// stderr is the daemon's, when the test started the process.
	stderr fmt.Stringer

	wmu sync.Mutex
	w   io.Writer

	nextID    atomic.Int64
	onRequest atomic.Pointer[requestHandler]

	mu        sync.Mutex
	pending   map[string]chan *msg
	notes     []note
	unmatched []*msg   // responses to no call of ours (null ids)
	requests  []*msg   // requests the daemon made
	bad       []string // lines that are not exactly one JSON-RPC message
	changed   chan struct{}
	done      chan struct{}
}

func newWire(t testing.TB, r io.Reader, w io.Writer, closer io.Closer) *wire {
	c := &wire{t: t, w: w, closer: closer, pending: map[string]chan *msg{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.read(r)
	t.Cleanup(func() {
		if closer != nil {
			closer.Close()
		}
	})
	return c
}

// dialWire connects to a socket daemon.
func dialWire(t testing.TB, network, addr string) *wire {
	t.Helper()
	nc, err := net.Dial(network, addr)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, addr, err)
	}
	c := newWire(t, nc, nc, nc)
	// Closed before waiting: a test that fails midway leaves the daemon
	// holding the connection open.
	t.Cleanup(func() {
		nc.Close()
		<-c.done
	})
	return c
}

// stdioWire talks to a process on its stdin and stdout.
func stdioWire(p *proc) *wire {
	c := newWire(p.t, p.stdout, p.stdin, p.stdin)
	c.stderr = p.stderr
	return c
}

func (c *wire) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.handle(line)
		}
		if err != nil {
			return
		}
	}
}

// checkMessage reports why line is not exactly one JSON-RPC 2.0 message.
func checkMessage(line []byte) (string, bool) {
	if !bytes.HasSuffix(line, []byte("\n")) {
		return "no newline at the end", false
	}
	body := bytes.TrimSuffix(line, []byte("\n"))
	if bytes.ContainsAny(body, "\n\r") || len(body) == 0 || body[0] != '{' {
		return "not one compact object", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return err.Error(), false
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return "jsonrpc is not 2.0", false
	}
	_, hasMethod := m["method"]
	_, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case hasMethod && !hasResult && !hasError:
		return "", true
	case !hasMethod && hasID && hasResult != hasError:
		return "", true
	}
	return "neither request, notification nor response", false
}

func (c *wire) handle(line []byte) {
	if why, ok := checkMessage(line); !ok {
		c.mu.Lock()
		c.bad = append(c.bad, fmt.Sprintf("%s: %.200q", why, line))
		c.mu.Unlock()
		return
	}
	m := &msg{raw: line}
	_ = json.Unmarshal(line, m)
	c.mu.Lock()
	defer func() {
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}()
	switch {
	case m.Method == "session/update":
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var raw struct {
			Update json.RawMessage `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &raw)
		c.notes = append(c.notes, note{SessionID: p.SessionID, Kind: p.Update.Kind, Update: raw.Update, Params: m.Params})
	case m.Method != "" && m.ID != nil:
		c.requests = append(c.requests, m)
		h := c.onRequest.Load()
		go c.answer(m, h)
	case m.Method != "":
		// other notifications are ignored
	default:
		if ch, ok := c.pending[string(m.ID)]; ok {
			delete(c.pending, string(m.ID))
			ch <- m
			return
		}
		c.unmatched = append(c.unmatched, m)
	}
}

func (c *wire) answer(m *msg, h *requestHandler) {
	var res any
	var e *rpcErr
	if h == nil {
		e = notFound
	} else {
		res, e = (*h)(m)
	}
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if e != nil {
		out["error"] = e
	} else {
		out["result"] = res
	}
	b, _ := json.Marshal(out)
	_ = c.writeLine(b)
}

// handleRequests sets how the daemon's requests are answered.
func (c *wire) handleRequests(h requestHandler) { c.onRequest.Store(&h) }

// writeLine writes b and a newline.
func (c *wire) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b[:len(b):len(b)], '\n'))
	return err
}

// send writes a message built from v.
func (c *wire) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.writeLine(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// notify sends a notification.
func (c *wire) notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// start sends a request and returns the channel its response arrives on.
func (c *wire) start(method string, params any) (<-chan *msg, error) {
	id := c.nextID.Add(1)
	ch := make(chan *msg, 1)
	c.mu.Lock()
	c.pending[strconv.FormatInt(id, 10)] = ch
	c.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return ch, c.writeLine(b)
}

// callErr calls method; it is safe on any goroutine. The error is an
// *rpcErr for an error response.
func (c *wire) callErr(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, err := c.start(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-c.done:
		// the reader may have delivered just before it ended
		select {
		case m := <-ch:
			if m.Error != nil {
				return nil, m.Error
			}
			return m.Result, nil
		default:
		}
		return nil, fmt.Errorf("%s: the connection closed", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// call calls method and fails the test on an error response.
func (c *wire) call(ctx context.Context, method string, params, result any) {
	c.t.Helper()
	raw, err := c.callErr(ctx, method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			c.t.Fatalf("%s: result %s: %v", method, raw, err)
		}
	}
}

// callFail calls method and returns the error response, failing the test
// on success.
func (c *wire) callFail(ctx context.Context, method string, params any) *rpcErr {
	c.t.Helper()
	raw, err := c.callErr(ctx, method, params)
	if err == nil {
		c.t.Fatalf("%s: want an error, got %s", method, raw)
	}
	e, ok := err.(*rpcErr)
	if !ok {
		c.t.Fatalf("%s: %v", method, err)
	}
	return e
}

// initialize runs the handshake with the given client capabilities.
func (c *wire) initialize(ctx context.Context, caps map[string]any) initResult {
	c.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	var res initResult
	c.call(ctx, "initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": caps,
		"clientInfo":         map[string]any{"name": "e2e", "version": "1"},
	}, &res)
	return res
}

type initResult struct {
	ProtocolVersion int `json:"protocolVersion"`
	AgentInfo       struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	AuthMethods []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"authMethods"`
}

type newResult struct {
	SessionID string `json:"sessionId"`
	Modes     struct {
		CurrentModeID string `json:"currentModeId"`
	} `json:"modes"`
}

// newSession creates a session in cwd.
func (c *wire) newSession(ctx context.Context, cwd string) string {
	c.t.Helper()
	var res newResult
	c.call(ctx, "session/new", newParams(cwd), &res)
	if res.SessionID == "" {
		c.t.Fatal("session/new: no sessionId")
	}
	return res.SessionID
}

func promptParams(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

// prompt runs a turn and returns its stop reason.
func (c *wire) prompt(ctx context.Context, sid, text string) string {
	c.t.Helper()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	c.call(ctx, "session/prompt", promptParams(sid, text), &res)
	return res.StopReason
}

// promptAsync starts a turn; the channel yields its answer.
func (c *wire) promptAsync(sid, text string) <-chan *msg {
	c.t.Helper()
	ch, err := c.start("session/prompt", promptParams(sid, text))
	if err != nil {
		c.t.Fatalf("session/prompt: %v", err)
	}
	return ch
}

// stopReason waits for an async prompt's answer.
func stopReason(ctx context.Context, t testing.TB, ch <-chan *msg) string {
	t.Helper()
	select {
	case m := <-ch:
		if m.Error != nil {
			t.Fatalf("session/prompt: %v", m.Error)
		}
		var res struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(m.Result, &res)
		return res.StopReason
	case <-ctx.Done():
		t.Fatal("session/prompt: no answer")
	}
	return ""
}

// updates returns the session/update notifications received so far for
// sid ("" for all).
func (c *wire) updates(sid string) []note {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []note
	for _, n := range c.notes {
		if sid == "" || n.SessionID == sid {
			out = append(out, n)
		}
	}
	return out
}

// waitUpdates waits until the updates of sid satisfy ok.
func (c *wire) waitUpdates(ctx context.Context, sid string, ok func([]note) bool) []note {
	c.t.Helper()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if u := c.updates(sid); ok(u) {
			return u
		}
		select {
		case <-ch:
		case <-c.done:
			if u := c.updates(sid); ok(u) {
				return u
			}
			c.t.Fatalf("connection closed while waiting for updates of %s", sid)
		case <-ctx.Done():
			c.t.Fatalf("timed out waiting for updates of %s; got %d", sid, len(c.updates(sid)))
		}
	}
}

// waitUnmatched waits for an error response with a null id and code.
func (c *wire) waitUnmatched(ctx context.Context, code int) *msg {
	c.t.Helper()
	for {
		c.mu.Lock()
		ch := c.changed
		for i, m := range c.unmatched {
			if m.Error != nil && m.Error.Code == code {
				c.unmatched = append(c.unmatched[:i:i], c.unmatched[i+1:]...)
				c.mu.Unlock()
				return m
			}
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			c.t.Fatalf("no error response with code %d and a null id", code)
		}
	}
}

// badLines returns the lines that were not one JSON-RPC message each.
func (c *wire) badLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bad...)
}

// daemonRequests returns the requests the daemon made with this method.
func (c *wire) daemonRequests(method string) []*msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*msg
	for _, m := range c.requests {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// text concatenates the agent_message_chunk texts among ns.
func text(ns []note) string {
	var b strings.Builder
	for _, n := range ns {
		if n.Kind != "agent_message_chunk" {
			continue
		}
		var u struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(n.Update, &u)
		b.WriteString(u.Content.Text)
	}
	return b.String()
}

// count counts the updates of a kind.
func count(ns []note, kind string) int {
	n := 0
	for _, x := range ns {
		if x.Kind == kind {
			n++
		}
	}
	return n
}

// textIs waits for the agent text of a session to reach want.
func textIs(want string) func([]note) bool {
	return func(ns []note) bool { return text(ns) == want }
}
