// This file holds the transport cases: stdout purity, UTF-8, huge and
// invalid lines, and $/cancel_request.

package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

func goCases() []*Case {
	var all []*Case
	for _, group := range [][]*Case{transportCases(), initCases(), sessionCases(), promptCases(), configCases(), toolCases(), subagentCases(), subagentCases2(), schemaCases(), newerCases()} {
		all = append(all, group...)
	}
	return all
}

func transportCases() []*Case {
	return []*Case{
		{
			ID:    "transport/stdout-purity",
			Name:  "every stdout line of a plain session is one JSON-RPC 2.0 message",
			Items: []string{"acp-v1#1", "acp-v1#4", "acp-v1#6"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				t.Prompt(c, sid, "hello")
				t.Barrier(c)
			},
		},
		{
			ID:    "transport/stdout-purity-debug",
			Name:  "with --log-level debug, stdout stays pure through tool calls while logs go to stderr",
			Items: []string{"acp-v1#1", "acp-v1#3", "acp-v1#4", "acp-v1#6"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json", Args: []string{"--log-level", "debug", "--mode", "yolo"}}, nil)
				for _, p := range []string{"conf-write", "conf-run", "conf-plan", "conf-spawn", "hello"} {
					t.EndTurn(c, sid, p)
				}
				t.Barrier(c)
				c.Shutdown(t.grace())
				if c.stderr.Len() == 0 {
					t.Errorf("no diagnostics on stderr with --log-level debug")
				}
			},
		},
		{
			ID:    "transport/exit-on-eof",
			Name:  "when the client closes the agent's stdin with a session open, the agent exits by itself",
			Items: []string{"extra#1"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				if m := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}}); m.Error != nil {
					t.Logf("session/new failed (%v); checked with no session open", m.Error)
				}
				if err := c.CloseStdin(); err != nil {
					t.Fatalf("closing stdin: %v", err)
				}
				grace := exitGrace(t)
				timer := time.NewTimer(grace)
				defer timer.Stop()
				select {
				case <-c.Done():
				case <-timer.C:
					c.Kill()
					t.Fatalf("the agent is still running %s after its stdin closed (the official Rust SDK's client waits 1 s, then sends SIGTERM)", grace)
				case <-t.ctx.Done():
					t.Fatalf("the agent did not exit after its stdin closed before the case timed out")
				}
			},
		},
		{
			ID:    "transport/non-ascii",
			Name:  `a prompt "größe 😀" round-trips through message chunks as valid UTF-8`,
			Items: []string{"acp-v1#2"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				const s = "größe 😀"
				turn := t.Prompt(c, sid, s)
				got := AgentText(c, sid, turn.Start, turn.Resp.Seq)
				switch {
				case strings.Contains(got, s):
				case t.IsDshd():
					t.Errorf("dshd's scripted model echoes the prompt, but the chunks read %q", got)
				case strings.Contains(got, "gr"):
					t.Logf("the reply does not echo the prompt (%q); only UTF-8 validity was checked", clip(got, 80))
				}
			},
		},
		{
			ID:    "transport/invalid-utf8",
			Name:  "input with invalid UTF-8 gets an error or a result, output stays valid UTF-8, and the connection survives",
			Items: []string{"acp-v1#2", "acp-v1#8"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				if err := c.WriteRaw([]byte("\xff\xfe not utf8")); err != nil {
					t.Fatalf("%v", err)
				}
				t.Expect(c, 0, "an error with id null for a line that is not JSON", func(m *Msg) bool {
					return m.IsResponse() && m.IDKey() == "null" && m.Error != nil
				})
				seq := c.Seq()
				line := []byte(`{"jsonrpc":"2.0","id":"bad-utf8","method":"session/prompt","params":{"sessionId":` + string(mustJSON(sid)) + `,"prompt":[{"type":"text","text":"bad \xff\xfe bytes"}]}}`)
				if err := c.WriteRaw(line); err != nil {
					t.Fatalf("%v", err)
				}
				// Invalid UTF-8 makes the line invalid JSON (RFC 8259 §8.1), so
				// -32700 with id null is as good as an answer to the request.
				t.Expect(c, seq, "an answer to the request with invalid UTF-8", func(m *Msg) bool {
					return m.IsResponse() && (m.IDKey() == `"bad-utf8"` || (m.IDKey() == "null" && m.Error != nil))
				})
				t.Prompt(c, sid, "still alive")
			},
		},
		{
			ID:    "transport/line-50mib",
			Name:  "a 50 MiB request line is read whole and answered (-32601 for an unknown method), and the connection lives on",
			Items: []string{"acp-v1#8", "acp-v1#9"},
			Heavy: true,
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				id := json.RawMessage(`"big"`)
				if err := c.WriteStream("(a 50 MiB _conformance/big request)", "_conformance/big", id, bigLine(id, 50<<20)); err != nil {
					t.Fatalf("%v", err)
				}
				l := t.Response(c, id)
				t.WantError(l.Msg, -32601, "a 50 MiB request for an unknown method")
				t.NewSession(c, t.Cwd)
			},
		},
		{
			ID:    "transport/line-over-limit",
			Name:  "a line of 64 MiB + 1 byte, over dshd's limit, gets an error and the connection lives on",
			Items: []string{"acp-v1#8"},
			Dshd:  true,
			Heavy: true,
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				seq := c.Seq()
				id := json.RawMessage(`"huge"`)
				if err := c.WriteStream("(a 64 MiB + 1 byte line)", "_conformance/big", id, bigLine(id, 64<<20+1)); err != nil {
					t.Fatalf("%v", err)
				}
				t.Expect(c, seq, "an error for the oversized line", func(m *Msg) bool { return m.IsResponse() && m.Error != nil })
				t.NewSession(c, t.Cwd)
			},
		},
		{
			ID:    "transport/cancel-request-inflight",
			Name:  "$/cancel_request right after a request still yields exactly one response for it",
			Items: []string{"acp-v1#72", "acp-v1#5"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				id := t.Send(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}})
				t.Notify(c, "$/cancel_request", map[string]any{"requestId": id})
				l := t.Response(c, id)
				if e := l.Msg.Error; e != nil && e.Code != -32800 {
					t.Errorf("a cancelled request must end with a result or -32800, got %v", e)
				}
				t.Barrier(c)
			},
		},
		{
			ID:    "transport/cancel-request-prompt",
			Name:  "$/cancel_request for a running prompt ends it with stopReason cancelled, answered once",
			Items: []string{"acp-v1#72", "acp-v1#11"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				id, seq := t.SendStreaming(c, sid, "conf-hang")
				t.Notify(c, "$/cancel_request", map[string]any{"requestId": id})
				turn := t.Finish(c, id, seq)
				t.WantStop(turn, "cancelled", "a prompt cancelled with $/cancel_request")
				t.Barrier(c)
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the next prompt")
			},
		},
	}
}

// exitGrace is how long an agent gets to exit after its stdin closed:
// generous for a loaded machine, well within the case's watchdog.
func exitGrace(t *T) time.Duration {
	return min(10*time.Second, t.r.opts.Timeout/2)
}

// bigLine writes a request line of exactly size bytes: an unknown method
// whose params carry one long string.
func bigLine(id json.RawMessage, size int) func(io.Writer) (int64, error) {
	return func(w io.Writer) (int64, error) {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"_conformance/big","params":{"blob":"`, id)
		tail := `"}}`
		n := size - len(head) - len(tail)
		if n < 0 {
			return 0, fmt.Errorf("line size %d too small", size)
		}
		if _, err := io.WriteString(w, head); err != nil {
			return 0, err
		}
		chunk := []byte(strings.Repeat("a", 1<<16))
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return 0, err
			}
			n -= k
		}
		_, err := io.WriteString(w, tail)
		return int64(size), err
	}
}
