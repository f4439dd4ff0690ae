// End-to-end tests of an acp child (a child dshd) that runs a command
// through its parent's terminal, which the parent runs in the editor's
// (issue 11, item 9): the child's model gets the command's whole output,
// and the child's token usage reaches the parent.

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// childModel routes the fake model's requests: the parent delegates, the
// child runs `echo hi` and reports the tool's answer, the parent ends.
// The child's two calls report known usage.
func childModel(srv *openaitest.Server) {
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if c == nil {
			return openaitest.Status(400)
		}
		var tool string
		for _, m := range c.Messages {
			if m.Role == "tool" {
				_ = json.Unmarshal(m.Content, &tool)
			}
		}
		child := strings.Contains(c.LastUserText(), "child task")
		switch {
		case child && tool == "":
			return openaitest.Reply{
				ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command":"echo hi"}`}},
				Usage:     &openaitest.Usage{PromptTokens: 1000, CompletionTokens: 50},
			}
		case child:
			return openaitest.Reply{Text: []string{"child saw: " + tool}, Usage: &openaitest.Usage{PromptTokens: 1100, CompletionTokens: 60}}
		case tool == "":
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "subagent_acp", Arguments: `{"description":"d","prompt":"child task"}`}}}
		}
		return openaitest.Text("parent done")
	})
}

// childToolResult is what the child's model got back from run_command.
func childToolResult(srv *openaitest.Server) string {
	for _, r := range srv.ChatRequests() {
		if !strings.Contains(r.LastUserText(), "child task") {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				var s string
				_ = json.Unmarshal(m.Content, &s)
				return s
			}
		}
	}
	return ""
}

// slowTerminal is an editor terminal whose command prints first, is
// polled, then prints last and exits: the final output holds more than
// any poll saw.
type slowTerminal struct {
	mu     sync.Mutex
	polls  int
	polled chan struct{}
}

func (s *slowTerminal) handle(m *msg) (any, *rpcErr) {
	exit := map[string]any{"exitCode": 0}
	switch m.Method {
	case "terminal/create":
		return map[string]any{"terminalId": "t1"}, nil
	case "terminal/output":
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-s.polled:
			return map[string]any{"output": "first part\nlast part\n", "truncated": false, "exitStatus": exit}, nil
		default:
		}
		s.polls++
		if s.polls == 1 {
			close(s.polled)
		}
		return map[string]any{"output": "first part\n", "truncated": false}, nil
	case "terminal/wait_for_exit":
		<-s.polled
		return exit, nil
	case "terminal/release", "terminal/kill":
		return map[string]any{}, nil
	}
	return nil, &rpcErr{Code: -32601, Message: "Method not found"}
}

func TestAnACPChildGetsTheWholeOutputOfACommandRunInTheEditorsTerminal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func() requestHandler
		want    string
	}{
		{"a command that ends before the first poll", func() requestHandler { return editorTerminal("fast output\n") }, "fast output"},
		{"output printed after the last poll", func() requestHandler {
			s := &slowTerminal{polled: make(chan struct{})}
			return s.handle
		}, "first part\nlast part"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := fakeModel(t)
			childModel(srv)
			p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--mode", "yolo", "--subagent", "subagent_acp=acp")
			w := stdioWire(p)
			w.handleRequests(tc.handler())
			w.initialize(ctx, map[string]any{"terminal": true})
			sid := w.newSession(ctx, t.TempDir())
			if stop := w.prompt(ctx, sid, "delegate this"); stop != "end_turn" {
				t.Fatalf("stop reason %q; stderr:\n%s", stop, p.stderr)
			}
			if got := childToolResult(srv); !strings.Contains(got, tc.want) {
				t.Fatalf("the child's model got %q from run_command, want %q in it; stderr:\n%s", got, tc.want, p.stderr)
			}
			// The child's usage reaches the parent's subagent tool call.
			var usage struct {
				InputTokens  int64 `json:"inputTokens"`
				OutputTokens int64 `json:"outputTokens"`
			}
			for _, n := range w.updates(sid) {
				var u struct {
					RawOutput struct {
						Usage *json.RawMessage `json:"usage"`
					} `json:"rawOutput"`
				}
				if n.Kind == "tool_call_update" && json.Unmarshal(n.Update, &u) == nil && u.RawOutput.Usage != nil {
					_ = json.Unmarshal(*u.RawOutput.Usage, &usage)
				}
			}
			if usage.InputTokens != 2100 || usage.OutputTokens != 110 {
				t.Fatalf("the parent reports the child's usage as %+v, want 2100 in, 110 out", usage)
			}
		})
	}
}
