// End-to-end tests of error wording: a peer's JSON-RPC error keeps its
// human reason whichever field carries it (an editor's fs/terminal answer,
// the model server), and dshd's own errors for malformed params say what
// was expected in protocol terms, never in Go's.

package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// reasonShapes are the ways peers carry an error's reason: a string as
// data, data.reason (dshd), data.details (the TS SDK, acpx), data.error
// (the Go SDK) and data.message.
var reasonShapes = []struct {
	name string
	data any
}{
	{"data as a string", "disk quota exceeded"},
	{"data.reason", map[string]any{"reason": "disk quota exceeded"}},
	{"data.details", map[string]any{"details": "disk quota exceeded"}},
	{"data.error", map[string]any{"error": "disk quota exceeded"}},
	{"data.message", map[string]any{"message": "disk quota exceeded"}},
}

// toolFailure returns the text of the first failed tool call update.
func toolFailure(ns []note) (string, bool) {
	for _, n := range ns {
		var u struct {
			Status  string `json:"status"`
			Content []struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		}
		if n.Kind != "tool_call_update" || json.Unmarshal(n.Update, &u) != nil || u.Status != "failed" {
			continue
		}
		var b strings.Builder
		for _, c := range u.Content {
			b.WriteString(c.Content.Text)
		}
		return b.String(), true
	}
	return "", false
}

// toolResultOf returns what the model was told of tool call id.
func toolResultOf(srv *openaitest.Server, id string) string {
	for _, r := range srv.ChatRequests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Text()
			}
		}
	}
	return ""
}

func TestAnEditorsErrorKeepsItsReasonForTheModelAndTheClient(t *testing.T) {
	for _, tool := range []struct {
		name, call, args, method string
		caps                     map[string]any
	}{
		{"a file write", "write_file", `{"path":"out.txt","content":"hello"}`, "fs/write_text_file", map[string]any{"fs": map[string]any{"writeTextFile": true}}},
		{"a command", "run_command", `{"command":"echo hi"}`, "terminal/create", map[string]any{"terminal": true}},
	} {
		for _, shape := range reasonShapes {
			t.Run(tool.name+", "+shape.name, func(t *testing.T) {
				ctx := testkit.Context(t)
				srv := fakeModel(t)
				srv.Enqueue(
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: tool.call, Arguments: tool.args}}},
					openaitest.Text("done"),
				)
				p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--mode", "yolo", "--state-dir", t.TempDir())
				c := stdioWire(p)
				c.handleRequests(func(m *msg) (any, *rpcErr) {
					if m.Method == tool.method {
						b, _ := json.Marshal(shape.data)
						return nil, &rpcErr{Code: -32603, Message: "Internal error", Data: b}
					}
					return nil, notFound
				})
				c.initialize(ctx, tool.caps)
				sid := c.newSession(ctx, t.TempDir())
				c.endTurn(ctx, sid, "go")
				if len(c.daemonRequests(tool.method)) == 0 {
					t.Fatalf("dshd never called %s", tool.method)
				}
				shown, ok := toolFailure(c.updates(sid))
				if !ok || !strings.Contains(shown, "disk quota exceeded") {
					t.Errorf("the client was shown %q (failed: %v), want the editor's reason", shown, ok)
				}
				if told := toolResultOf(srv, "call_1"); !strings.Contains(told, "disk quota exceeded") {
					t.Errorf("the model was told %q, want the editor's reason", told)
				}
				p.hangUp(ctx)
			})
		}
	}
}

func TestAModelServersErrorKeepsItsReason(t *testing.T) {
	for _, tc := range []struct {
		name, body string
	}{
		{"a JSON-RPC error object with data.details", `{"error":{"code":-32603,"message":"Internal error","data":{"details":"disk quota exceeded"}}}`},
		{"a JSON-RPC error object with data as a string", `{"error":{"code":-32603,"message":"Internal error","data":"disk quota exceeded"}}`},
		{"an OpenAI error object with details beside the message", `{"error":{"message":"Internal error","type":"server_error","details":"disk quota exceeded"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			srv.Handle(func(*openaitest.Request) openaitest.Reply {
				return openaitest.Reply{Status: 400, Body: tc.body}
			})
			code, _, stderr := runDshd(t, nil, promptArgs(t, srv, "hi")...)
			if code != 1 || !strings.Contains(stderr, "disk quota exceeded") {
				t.Fatalf("exit %d, want 1 with the server's reason; stderr:\n%s", code, stderr)
			}
		})
	}
}

// goInternals are what a Go decoding error leaks: type names, the json
// package's wording.
var goInternals = regexp.MustCompile(`acp\.|json\.|RawMessage|Go (value|struct)|unmarshal|struct \{|jsontext|\[\]`)

func TestMalformedParamsAreAnsweredInProtocolTerms(t *testing.T) {
	ctx := testkit.Context(t)
	p, c := stdioDaemon(t, writeScript(t, badInputScript), t.TempDir())
	cwd := t.TempDir()
	c.initialize(ctx, nil)
	for _, tc := range []struct {
		method       string
		params       any
		field, words string
	}{
		{"initialize", map[string]any{"protocolVersion": "one"}, "protocolVersion", "must be an integer"},
		{"session/new", map[string]any{"cwd": 5, "mcpServers": []any{}}, "cwd", "must be a string"},
		{"session/new", map[string]any{"cwd": cwd, "mcpServers": map[string]any{}}, "mcpServers", "must be an array"},
		{"session/new", map[string]any{"cwd": cwd, "mcpServers": []any{map[string]any{"type": "ftp", "name": "x"}}}, "mcpServers[0].type", `unknown mcp server type "ftp"`},
		{"session/new", map[string]any{"cwd": cwd, "mcpServers": []any{map[string]any{"name": "a", "command": "b", "args": "x"}}}, "mcpServers[0].args", "must be an array"},
		{"session/load", []any{1}, "params", "must be an object"},
		{"session/prompt", map[string]any{"sessionId": "s_x", "prompt": "hi"}, "prompt", "must be an array"},
		{"session/prompt", map[string]any{"sessionId": "s_x", "prompt": []any{map[string]any{"type": "text", "text": 5}}}, "prompt[0].text", "must be a string"},
		{"session/prompt", map[string]any{"sessionId": "s_x", "prompt": []any{map[string]any{"text": "a"}}}, "prompt[0].type", "required"},
		{"session/prompt", map[string]any{"sessionId": "s_x", "prompt": []any{map[string]any{"type": "resource", "resource": 5}}}, "prompt[0].resource", "must be an object"},
		{"session/set_mode", map[string]any{"sessionId": 1, "modeId": "x"}, "sessionId", "must be a string"},
	} {
		t.Run(tc.method+" "+tc.field, func(t *testing.T) {
			e := c.callFail(ctx, tc.method, tc.params)
			var data struct {
				Field  string `json:"field"`
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(e.Data, &data)
			if e.Code != -32602 || data.Field != tc.field || !strings.Contains(data.Reason, tc.words) {
				t.Errorf("error %v, want -32602 on %s saying %q", e, tc.field, tc.words)
			}
			if goInternals.MatchString(e.Message + data.Reason) {
				t.Errorf("error %v speaks Go, not the protocol", e)
			}
		})
	}
	p.hangUp(ctx)
}
