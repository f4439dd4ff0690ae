package remote

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/dshd/dshd/internal/testkit"
)

// roundTrip drives one dialled connection through a handshake, a session,
// a prompt with updates and a permission question the client answers.
func roundTrip(t *testing.T, rwc io.ReadWriteCloser) {
	ctx := testkit.Context(t)
	c := newClient(t, rwc, func(m rpcMsg) any {
		if m.Method != "session/request_permission" {
			t.Errorf("unexpected request %s", m.Method)
		}
		return map[string]any{"outcome": "allowed"}
	})
	c.mustCall(ctx, "initialize", map[string]any{"protocolVersion": 1})
	if got := string(c.mustCall(ctx, "session/new", map[string]any{"cwd": "/"})); got != `{"sessionId":"s1"}` {
		t.Fatalf("session/new answered %s", got)
	}
	c.waitText(ctx, "s1", "ready")
	res := c.mustCall(ctx, "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
	if string(res) != `{"stopReason":"end_turn"}` {
		t.Fatalf("prompt answered %s", res)
	}
	want := []string{"ready", "working", `permission: {"outcome":"allowed"}`}
	if got := c.texts("s1"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("updates %q, want %q", got, want)
	}
	// A message with raw line breaks inside (pretty-printed JSON) is one
	// message all the same.
	if got := string(c.mustCall(ctx, "echo", map[string]any{"a": "x\ny"})); got != `{"a":"x\ny"}` {
		t.Fatalf("echo answered %s", got)
	}
}

func TestWebSocket_AConnectionCarriesTheWholeProtocol(t *testing.T) {
	a, _, u := newServer(t, Options{})
	rwc, err := Dial(testkit.Context(t), "ws"+strings.TrimPrefix(u, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, rwc)
	if n := a.served.Load(); n != 1 {
		t.Fatalf("%d connections served, want 1", n)
	}
}

func TestStreamableHTTP_AConnectionCarriesTheWholeProtocol(t *testing.T) {
	a, _, u := newServer(t, Options{})
	rwc, err := Dial(testkit.Context(t), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, rwc)
	if n := a.served.Load(); n != 1 {
		t.Fatalf("%d connections served, want 1", n)
	}
	rwc.Close()
	select {
	case <-a.connEnded(0):
	case <-testkit.Context(t).Done():
		t.Fatal("closing the dialled connection (DELETE) did not end the served one")
	}
}

// sse reads the events of one SSE stream.
type sse struct {
	resp   *http.Response
	events chan string
	done   chan struct{}
}

func openSSE(t *testing.T, u string, hdr map[string]string) *sse {
	t.Helper()
	resp := send(t, testkit.Context(t), http.MethodGet, u, nil, map[string]string{"Accept": "text/event-stream"}, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %v: %d", hdr, resp.StatusCode)
	}
	s := &sse{resp: resp, events: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" || line == ":":
				if line == ":" {
					s.events <- ":"
				}
			case strings.HasPrefix(line, "data: "):
				s.events <- strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	t.Cleanup(func() {
		resp.Body.Close()
		<-s.done
		http.DefaultClient.CloseIdleConnections()
	})
	return s
}

func (s *sse) next(t *testing.T) string {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-testkit.Context(t).Done():
		t.Fatal("no SSE event")
		return ""
	}
}

func post(t *testing.T, u, body string, hdr map[string]string) *http.Response {
	t.Helper()
	resp := send(t, testkit.Context(t), http.MethodPost, u, strings.NewReader(body), map[string]string{"Content-Type": "application/json"}, hdr)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

func initialize(t *testing.T, u string) string {
	t.Helper()
	resp := post(t, u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	id := resp.Header.Get(HeaderConnectionID)
	if id == "" {
		t.Fatal("initialize answered without Acp-Connection-Id")
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"protocolVersion":1`) {
		t.Fatalf("initialize answered %s", b)
	}
	return id
}

// TestStreamableHTTP_MessagesTakeTheStreamsTheRFDNames checks the routing
// on the wire: session/new's answer on the connection stream, the
// session's updates, the agent's request and the prompt's answer on the
// session stream, the client's answer POSTed with the session header.
func TestStreamableHTTP_MessagesTakeTheStreamsTheRFDNames(t *testing.T) {
	_, _, u := newServer(t, Options{})
	id := initialize(t, u)
	conn := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	if r := post(t, u, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}`, map[string]string{HeaderConnectionID: id}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("session/new POST: %d", r.StatusCode)
	}
	if e := conn.next(t); !strings.Contains(e, `"id":2`) || !strings.Contains(e, `"result":{"sessionId":"s1"}`) {
		t.Fatalf("connection stream: %s", e)
	}
	sess := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	if e := sess.next(t); !strings.Contains(e, `"text":"ready"`) {
		t.Fatalf("the update sent before the session stream opened did not wait for it: %s", e)
	}
	if r := post(t, u, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("prompt POST: %d", r.StatusCode)
	}
	if e := sess.next(t); !strings.Contains(e, `"text":"working"`) {
		t.Fatalf("session stream: %s", e)
	}
	if e := sess.next(t); !strings.Contains(e, `"method":"session/request_permission"`) {
		t.Fatalf("session stream: %s", e)
	}
	// The answer to a session's request must name the session.
	if r := post(t, u, `{"jsonrpc":"2.0","id":100,"result":{"outcome":"x"}}`, map[string]string{HeaderConnectionID: id}); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("an answer without Acp-Session-Id: %d, want 400", r.StatusCode)
	}
	if r := post(t, u, `{"jsonrpc":"2.0","id":100,"result":{"outcome":"x"}}`, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("the permission answer POST: %d", r.StatusCode)
	}
	if e := sess.next(t); !strings.Contains(e, `permission: {\"outcome\":\"x\"}`) {
		t.Fatalf("session stream: %s", e)
	}
	if e := sess.next(t); !strings.Contains(e, `"id":3`) || !strings.Contains(e, `"result":{"stopReason":"end_turn"}`) {
		t.Fatalf("the prompt's answer: %s", e)
	}
	select {
	case e := <-conn.events:
		t.Fatalf("a session message came on the connection stream: %s", e)
	default:
	}
}

func TestStreamableHTTP_StatusCodes(t *testing.T) {
	_, _, u := newServer(t, Options{SessionExists: func(id string) bool { return id == "s1" }})
	id := initialize(t, u)
	hdr := map[string]string{HeaderConnectionID: id}
	req := `{"jsonrpc":"2.0","id":9,"method":"echo","params":{}}`
	for _, tc := range []struct {
		name   string
		status int
		do     func() *http.Response
	}{
		{"a body that is not JSON is 415 without the JSON media type", 415, func() *http.Response {
			return post(t, u, req, map[string]string{HeaderConnectionID: id, "Content-Type": "text/plain"})
		}},
		{"a batch is 501", 501, func() *http.Response { return post(t, u, `[`+req+`]`, hdr) }},
		{"malformed JSON is 400", 400, func() *http.Response { return post(t, u, `{"jsonrpc":`, hdr) }},
		{"a POST without Acp-Connection-Id is 400", 400, func() *http.Response { return post(t, u, req, nil) }},
		{"an unknown Acp-Connection-Id is 404", 404, func() *http.Response {
			return post(t, u, req, map[string]string{HeaderConnectionID: "nope"})
		}},
		{"a session method without Acp-Session-Id is 400", 400, func() *http.Response {
			return post(t, u, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1"}}`, hdr)
		}},
		{"a mismatched Acp-Session-Id is 400", 400, func() *http.Response {
			return post(t, u, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1"}}`, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s2"})
		}},
		{"initialize on an existing connection is 400", 400, func() *http.Response {
			return post(t, u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, hdr)
		}},
		{"a GET without text/event-stream is 406", 406, func() *http.Response {
			return get(t, u, map[string]string{HeaderConnectionID: id, "Accept": "application/json"})
		}},
		{"a GET without Acp-Connection-Id is 400", 400, func() *http.Response { return get(t, u, map[string]string{}) }},
		{"a GET of an unknown connection is 404", 404, func() *http.Response { return get(t, u, map[string]string{HeaderConnectionID: "nope"}) }},
		{"a GET of an unknown session is 404", 404, func() *http.Response {
			return get(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s9"})
		}},
		{"PUT is 405", 405, func() *http.Response { return do(t, http.MethodPut, u, nil) }},
		{"DELETE without Acp-Connection-Id is 400", 400, func() *http.Response { return do(t, http.MethodDelete, u, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := tc.do(); r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", r.StatusCode, tc.status)
			}
		})
	}
	t.Run("a second reader of a stream is 409", func(t *testing.T) {
		openSSE(t, u, hdr)
		if r := get(t, u, hdr); r.StatusCode != http.StatusConflict {
			t.Fatalf("status %d, want 409", r.StatusCode)
		}
	})
	t.Run("DELETE is 202 and the connection is gone after it", func(t *testing.T) {
		if r := do(t, http.MethodDelete, u, hdr); r.StatusCode != http.StatusAccepted {
			t.Fatalf("DELETE: %d", r.StatusCode)
		}
		if r := post(t, u, req, hdr); r.StatusCode != http.StatusNotFound {
			t.Fatalf("POST after DELETE: %d, want 404", r.StatusCode)
		}
	})
}

func get(t *testing.T, u string, hdr map[string]string) *http.Response {
	t.Helper()
	if _, ok := hdr["Accept"]; !ok {
		hdr["Accept"] = "text/event-stream"
	}
	return do(t, http.MethodGet, u, hdr)
}

// do sends a request whose answer is not a stream the test reads.
func do(t *testing.T, method, u string, hdr map[string]string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	resp := send(t, ctx, method, u, nil, hdr)
	resp.Body.Close()
	return resp
}

// send sends a request and returns its answer, the body unread. The
// fields of each header map are set in turn; an empty value removes one.
func send(t *testing.T, ctx context.Context, method, u string, body io.Reader, hdrs ...map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, u, body)
	for _, hdr := range hdrs {
		for k, v := range hdr {
			if v == "" {
				req.Header.Del(k)
				continue
			}
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestAuth_AWrongTokenNeverReachesTheAgent(t *testing.T) {
	var mu sync.Mutex
	var failed, authed int
	obs := &countingObserver{}
	a, _, u := newServer(t, Options{Token: "0123456789abcdef-right", Observer: obs,
		AuthFailed: func(*http.Request) bool {
			mu.Lock()
			failed++
			mu.Unlock()
			return true // the listener says: end this connection
		},
		Authenticated: func(*http.Request) {
			mu.Lock()
			authed++
			mu.Unlock()
		}})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"no token is 401", "", 401},
		{"another scheme is 401", "Basic 0123456789abcdef-right", 401},
		{"a wrong token is 403", "Bearer 0123456789abcdef-wrong", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": tc.auth}
			if r := post(t, u, init, h); r.StatusCode != tc.status {
				t.Fatalf("POST initialize: %d, want %d", r.StatusCode, tc.status)
			} else if tc.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without a Bearer challenge: %q", r.Header.Get("WWW-Authenticate"))
			} else if !r.Close {
				t.Fatal("the refusal kept the connection open although AuthFailed asked to end it")
			}
			if r := get(t, u, map[string]string{"Authorization": tc.auth, HeaderConnectionID: "x"}); r.StatusCode != tc.status {
				t.Fatalf("GET stream: %d, want %d", r.StatusCode, tc.status)
			}
			hdr := http.Header{}
			if tc.auth != "" {
				hdr.Set("Authorization", tc.auth)
			}
			_, resp, err := websocket.Dial(testkit.Context(t), "ws"+strings.TrimPrefix(u, "http"), &websocket.DialOptions{HTTPHeader: hdr})
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("websocket upgrade: %v %v, want %d", resp, err, tc.status)
			}
			var se *StatusError
			_, err = Dial(testkit.Context(t), "ws"+strings.TrimPrefix(u, "http"), &DialOptions{Token: strings.TrimPrefix(tc.auth, "Bearer ")})
			if strings.HasPrefix(tc.auth, "Bearer ") && (!errors.As(err, &se) || se.Status != tc.status) {
				t.Fatalf("Dial: %v, want a StatusError %d", err, tc.status)
			}
		})
	}
	if n := a.served.Load(); n != 0 {
		t.Fatalf("%d connections reached the agent with a bad token", n)
	}
	mu.Lock()
	if failed == 0 || obs.limit("auth") != failed || authed != 0 {
		t.Fatalf("AuthFailed told %d times, observer %d, Authenticated %d", failed, obs.limit("auth"), authed)
	}
	mu.Unlock()
	rwc, err := Dial(testkit.Context(t), u, &DialOptions{Token: "0123456789abcdef-right"})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, rwc)
	mu.Lock()
	defer mu.Unlock()
	if authed == 0 {
		t.Fatal("Authenticated was not told of the requests with the right token")
	}
}

type countingObserver struct {
	mu     sync.Mutex
	opened map[string]int
	closed map[string]int
	limits map[string]int
}

func (o *countingObserver) inc(m *map[string]int, k string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}
func (o *countingObserver) ConnOpened(tr string) { o.inc(&o.opened, tr) }
func (o *countingObserver) ConnClosed(tr string) { o.inc(&o.closed, tr) }
func (o *countingObserver) LimitHit(l string)    { o.inc(&o.limits, l) }
func (o *countingObserver) limit(l string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.limits[l]
}

func TestStreamableHTTP_AnIdleStreamGetsKeepaliveComments(t *testing.T) {
	_, _, u := newServer(t, Options{KeepAlive: 10 * time.Millisecond})
	id := initialize(t, u)
	s := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	if e := s.next(t); e != ":" {
		t.Fatalf("want a keepalive comment, got %s", e)
	}
}

func TestStreamableHTTP_AConnectionWithoutStreamsEndsAfterTheDetachTimeout(t *testing.T) {
	a, _, u := newServer(t, Options{DetachTimeout: 20 * time.Millisecond})
	initialize(t, u)
	select {
	case <-a.connEnded(0):
	case <-testkit.Context(t).Done():
		t.Fatal("a connection nobody reads was kept")
	}
}

func TestStreamableHTTP_ReattachingASessionEndsTheDetachedConnectionThatHeldIt(t *testing.T) {
	a, h, u := newServer(t, Options{})
	old := initialize(t, u)
	stream := openSSE(t, u, map[string]string{HeaderConnectionID: old})
	post(t, u, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}`, map[string]string{HeaderConnectionID: old})
	stream.next(t)
	// The old client went away without DELETE; a new one reattaches s1.
	stream.resp.Body.Close()
	<-stream.done
	waitDetached(t, h, old)
	id := initialize(t, u)
	openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	select {
	case <-a.connEnded(0):
	case <-testkit.Context(t).Done():
		t.Fatal("the detached connection holding s1 was not ended")
	}
	select {
	case <-a.connEnded(1):
		t.Fatal("the new connection ended")
	default:
	}
}

func TestStreamableHTTP_AClientThatReadsNothingIsCutOffAfterTheWriteTimeout(t *testing.T) {
	obs := &countingObserver{}
	a, _, u := newServer(t, Options{MaxQueuedOutput: 4 << 10, WriteTimeout: 30 * time.Millisecond, Observer: obs})
	id := initialize(t, u)
	post(t, u, `{"jsonrpc":"2.0","id":2,"method":"flood","params":1000}`, map[string]string{HeaderConnectionID: id})
	select {
	case <-a.connEnded(0):
	case <-testkit.Context(t).Done():
		t.Fatal("a connection whose output nobody takes was kept")
	}
	if obs.limit("write-timeout") != 1 {
		t.Fatalf("write-timeout hits: %d", obs.limit("write-timeout"))
	}
}

func TestHandler_TheConnectionLimitAnswers503(t *testing.T) {
	obs := &countingObserver{}
	_, _, u := newServer(t, Options{MaxConnections: 1, Observer: obs})
	initialize(t, u)
	if r := post(t, u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a connection over the limit: %d, want 503", r.StatusCode)
	}
	_, resp, err := websocket.Dial(testkit.Context(t), "ws"+strings.TrimPrefix(u, "http"), nil)
	if err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a websocket over the limit: %v", err)
	}
	if obs.limit("connections") != 2 {
		t.Fatalf("connection limit hits: %d", obs.limit("connections"))
	}
}

// waitDetached waits until the server has seen every stream of connection
// id go.
func waitDetached(t *testing.T, h *Handler, id string) {
	t.Helper()
	waitConn(t, h, id, "the server still sees a stream", func(c *httpConn) bool { return c.receivers == 0 })
}

// waitConn waits until done, called with connection id's mu held, holds;
// each change of the connection looks again. It fails with what when the
// test's time is up.
func waitConn(t *testing.T, h *Handler, id, what string, done func(*httpConn) bool) {
	t.Helper()
	c := h.lookup(id)
	for {
		c.mu.Lock()
		ok, ch := done(c), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-testkit.Context(t).Done():
			t.Fatal(what)
		}
	}
}

func TestStreamableHTTP_WhatTheAgentWroteLastArrivesBeforeTheEnd(t *testing.T) {
	_, _, u := newServer(t, Options{})
	rwc, err := Dial(testkit.Context(t), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t)
	c := newClient(t, rwc, nil)
	c.mustCall(ctx, "initialize", map[string]any{})
	c.mustCall(ctx, "session/new", map[string]any{})
	c.waitText(ctx, "s1", "ready")
	m, err := c.call(ctx, "bye", map[string]any{"sessionId": "s1"})
	if err != nil || string(m.Result) != `"bye"` {
		t.Fatalf("the last answer: %s %v", m.Result, err)
	}
	c.waitText(ctx, "s1", "bye")
	<-c.done
}
