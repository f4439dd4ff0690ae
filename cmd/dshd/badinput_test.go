// End-to-end tests of bad input on stdio: each bad message gets a clear
// JSON-RPC error and the connection goes on serving.

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// badInputScript answers a huge prompt briefly, hangs on "hang", echoes
// the rest.
const badInputScript = `{"rules": [
  {"user": "^big", "text": "big prompt received"},
  {"user": "hang", "text": "Working on it, step by step", "chunk": 4, "hang": true},
  {"text": "You said: {{user}}"}
]}`

// rawCall writes the line built for a fresh id and waits for its answer.
func (c *wire) rawCall(ctx context.Context, build func(id int64) string) *msg {
	c.t.Helper()
	return c.callWith(ctx, func(id int64) error { return c.writeLine([]byte(build(id))) })
}

// callWith registers a fresh id, lets write send the request that has it,
// and waits for its answer.
func (c *wire) callWith(ctx context.Context, write func(id int64) error) *msg {
	c.t.Helper()
	id := c.nextID.Add(1)
	ch := make(chan *msg, 1)
	c.mu.Lock()
	c.pending[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	if err := write(id); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m := <-ch:
		return m
	case <-ctx.Done():
		c.t.Fatalf("no answer to request %d", id)
	}
	return nil
}

// streamLine writes prefix, n bytes of 'a' and suffix as one line,
// without building the line in memory.
func (c *wire) streamLine(prefix string, n int, suffix string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.w, prefix); err != nil {
		return err
	}
	chunk := []byte(strings.Repeat("a", 1<<20))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := c.w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := io.WriteString(c.w, suffix+"\n")
	return err
}

// streamCall is rawCall for a streamed line.
func (c *wire) streamCall(ctx context.Context, prefix func(id int64) string, n int, suffix string) *msg {
	c.t.Helper()
	return c.callWith(ctx, func(id int64) error { return c.streamLine(prefix(id), n, suffix) })
}

// alive checks that the connection still serves requests.
func (c *wire) alive(ctx context.Context) {
	c.t.Helper()
	var res struct {
		Sessions []any `json:"sessions"`
	}
	c.call(ctx, "session/list", map[string]any{}, &res)
}

func wantCode(t testing.TB, what string, e *rpcErr, code int) {
	t.Helper()
	if e == nil || e.Code != code {
		t.Errorf("%s: got %v, want code %d", what, e, code)
		return
	}
	if e.Message == "" {
		t.Errorf("%s: error without a message", what)
	}
}

func TestBadInputGetsErrorsAndTheConnectionLives(t *testing.T) {
	ctx := testkit.Context(t)
	script, cwd := writeScript(t, badInputScript), t.TempDir()
	p, c := stdioDaemon(t, script, t.TempDir())
	c.initialize(ctx, nil)

	t.Run("garbage lines get a parse error with a null id", func(t *testing.T) {
		for _, line := range []string{"{not json", "hello", `{"jsonrpc":"2.0","id":1,`, "\x00\x01\x02"} {
			c.sendRawLine(t, line)
			m := c.waitUnmatched(ctx, -32700)
			if string(m.ID) != "null" {
				t.Errorf("%q: id %s, want null", line, m.ID)
			}
			c.alive(ctx)
		}
	})

	t.Run("non-objects and batches are invalid requests", func(t *testing.T) {
		for _, line := range []string{
			`[{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}]`,
			`[]`, `42`, `"text"`, `null`,
			`{"jsonrpc":"2.0"}`,
		} {
			c.sendRawLine(t, line)
			c.waitUnmatched(ctx, -32600)
			c.alive(ctx)
		}
	})

	t.Run("unknown methods", func(t *testing.T) {
		e := c.callFail(ctx, "session/frobnicate", map[string]any{})
		wantCode(t, "unknown request", e, -32601)
		if !strings.Contains(string(e.Data), "session/frobnicate") {
			t.Errorf("error data %s does not name the method", e.Data)
		}
		wantCode(t, "unknown $/ request", c.callFail(ctx, "$/whatever", map[string]any{}), -32601)
		c.notify("unknown/notification", map[string]any{"x": 1})
		c.alive(ctx)
	})

	t.Run("wrong param types", func(t *testing.T) {
		for _, tc := range []struct {
			method string
			params any
		}{
			{"session/new", map[string]any{"cwd": 42, "mcpServers": []any{}}},
			{"session/new", map[string]any{"cwd": cwd, "mcpServers": "none"}},
			{"session/new", nil},
			{"session/new", []any{"positional"}},
			{"session/prompt", map[string]any{"sessionId": "s_x", "prompt": "not a list"}},
			{"session/prompt", map[string]any{"sessionId": 7, "prompt": []any{}}},
			{"session/set_mode", map[string]any{"sessionId": "s_x", "modeId": 5}},
			{"session/list", map[string]any{"cursor": 5}},
		} {
			wantCode(t, fmt.Sprintf("%s %v", tc.method, tc.params), c.callFail(ctx, tc.method, tc.params), -32602)
		}
		c.alive(ctx)
	})

	t.Run("relative paths", func(t *testing.T) {
		for _, tc := range []struct {
			method string
			params any
		}{
			{"session/new", newParams("relative/dir")},
			{"session/new", map[string]any{"cwd": cwd, "additionalDirectories": []any{"rel"}, "mcpServers": []any{}}},
			{"session/load", map[string]any{"sessionId": "s_x", "cwd": "rel", "mcpServers": []any{}}},
			{"session/resume", map[string]any{"sessionId": "s_x", "cwd": "rel"}},
			{"session/list", map[string]any{"cwd": "rel"}},
		} {
			wantCode(t, fmt.Sprintf("%s %v", tc.method, tc.params), c.callFail(ctx, tc.method, tc.params), -32602)
		}
		c.alive(ctx)
	})

	t.Run("unknown session ids", func(t *testing.T) {
		sid := "s_00000000-0000-0000-0000-000000000000"
		for _, tc := range []struct {
			method string
			params any
		}{
			{"session/prompt", promptParams(sid, "hi")},
			{"session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}},
			{"session/resume", map[string]any{"sessionId": sid, "cwd": cwd}},
			{"session/close", map[string]any{"sessionId": sid}},
			{"session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}},
			{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "yolo"}},
		} {
			wantCode(t, tc.method, c.callFail(ctx, tc.method, tc.params), -32002)
		}
		c.notify("session/cancel", map[string]any{"sessionId": sid})
		c.alive(ctx)
	})

	t.Run("a prompt on a closed session", func(t *testing.T) {
		sid := c.newSession(ctx, cwd)
		c.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
		wantCode(t, "prompt after close", c.callFail(ctx, "session/prompt", promptParams(sid, "hi")), -32002)
		c.alive(ctx)
	})

	t.Run("concurrent prompts on one session", func(t *testing.T) {
		sid := c.newSession(ctx, cwd)
		first := c.promptAsync(sid, "hang")
		c.waitUpdates(ctx, sid, textIs(hangText))
		e := c.callFail(ctx, "session/prompt", promptParams(sid, "me too"))
		if e.Code != -32602 && e.Code != -32600 {
			t.Errorf("second prompt: %v, want an invalid-request/params error", e)
		}
		c.notify("session/cancel", map[string]any{"sessionId": sid})
		if got := stopReason(ctx, t, first); got != "cancelled" {
			t.Fatalf("first prompt: %q, want cancelled", got)
		}
		if got := c.prompt(ctx, sid, "now alone"); got != "end_turn" {
			t.Fatalf("prompt after the cancel: %q", got)
		}
	})

	t.Run("invalid UTF-8", func(t *testing.T) {
		m := c.rawCall(ctx, func(id int64) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp/%s","mcpServers":[]}}`, id, "\xff\xfe")
		})
		if m.Error == nil || m.Error.Code != -32600 {
			t.Errorf("invalid UTF-8: %s, want -32600 with the request's id", m.raw)
		}
		c.alive(ctx)
	})

	t.Run("a 50 MiB prompt is accepted or refused clearly", func(t *testing.T) {
		sid := c.newSession(ctx, cwd)
		size := 50 << 20
		if raceEnabled {
			// The race detector makes the daemon's JSON passes over the
			// text ~10x slower; the full size runs without -race.
			size = 4 << 20
		}
		m := c.streamCall(ctx, func(id int64) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"big `, id, sid)
		}, size, `"}]}}`)
		if m.Error != nil {
			t.Logf("%d MiB prompt refused: %v", size>>20, m.Error)
			if m.Error.Message == "" {
				t.Error("refused without a message")
			}
		} else {
			t.Logf("%d MiB prompt accepted: %s", size>>20, m.Result)
		}
		c.alive(ctx)
		if got := c.prompt(ctx, sid, "small again"); got != "end_turn" {
			t.Fatalf("prompt after the big one: %q", got)
		}
	})

	t.Run("a line over the 64 MiB limit", func(t *testing.T) {
		// Streamed: the line is never held whole on this side.
		if err := c.streamLine(`{"jsonrpc":"2.0","id":"huge","method":"session/prompt","params":{"sessionId":"s_x","prompt":[{"type":"text","text":"`, 65<<20, `"}]}}`); err != nil {
			t.Fatalf("writing the huge line: %v", err)
		}
		m := c.waitUnmatched(ctx, -32600)
		if !strings.Contains(string(m.Error.Data), "limit") {
			t.Errorf("error %v does not mention the limit", m.Error)
		}
		c.alive(ctx)
	})

	if bad := c.badLines(); len(bad) > 0 {
		t.Errorf("stdout lines that are not JSON-RPC messages:\n%s", strings.Join(bad, "\n"))
	}
	if code := p.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%.2000s", code, p.stderr)
	}
}
