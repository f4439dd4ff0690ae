// End-to-end test of a subagent's permission question for a client that
// does not see subagent sessions (issue 11, item 16): the question names
// a tool call the client was shown on the parent's stream before.

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestAChildsPermissionQuestionNamesAToolCallTheClientWasShown(t *testing.T) {
	for _, provider := range []string{"spawn", "acp"} {
		t.Run(provider, func(t *testing.T) {
			ctx := testCtx(t)
			srv := fakeModel(t)
			srv.Handle(func(r *openaitest.Request) openaitest.Reply {
				c := r.Chat
				if c == nil {
					return openaitest.Status(400)
				}
				tool := ""
				for _, m := range c.Messages {
					if m.Role == "tool" {
						_ = json.Unmarshal(m.Content, &tool)
					}
				}
				child := strings.Contains(c.LastUserText(), "child task")
				switch {
				case child && tool == "":
					return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"note.txt","content":"x"}`}}}
				case child:
					return openaitest.Text("child saw: " + tool)
				case tool == "":
					return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "sub", Arguments: `{"description":"d","prompt":"child task"}`}}}
				}
				return openaitest.Text("parent done")
			})
			p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--subagent", "sub="+provider)
			w := stdioWire(p)
			var mu sync.Mutex
			var unannounced []string
			var sid string
			w.handleRequests(func(m *msg) (any, *rpcErr) {
				if m.Method != "session/request_permission" {
					return nil, &rpcErr{Code: -32601, Message: "Method not found"}
				}
				var q struct {
					SessionID string `json:"sessionId"`
					ToolCall  struct {
						ID string `json:"toolCallId"`
					} `json:"toolCall"`
				}
				_ = json.Unmarshal(m.Params, &q)
				shown := false
				for _, n := range w.updates(q.SessionID) {
					var u struct {
						ID string `json:"toolCallId"`
					}
					if n.Kind == "tool_call" && json.Unmarshal(n.Update, &u) == nil && u.ID == q.ToolCall.ID {
						shown = true
					}
				}
				mu.Lock()
				if !shown || q.SessionID != sid {
					unannounced = append(unannounced, q.SessionID+" "+q.ToolCall.ID)
				}
				mu.Unlock()
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
			})
			w.initialize(ctx, nil)
			mu.Lock()
			sid = w.newSession(ctx, t.TempDir())
			mu.Unlock()
			if stop := w.prompt(ctx, sid, "delegate this"); stop != "end_turn" {
				t.Fatalf("stop reason %q; stderr:\n%s", stop, p.stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(w.daemonRequests("session/request_permission")) == 0 {
				t.Fatalf("the child's write was never asked about; stderr:\n%s", p.stderr)
			}
			if len(unannounced) > 0 {
				t.Fatalf("permission questions about tool calls never shown on the parent's stream: %v\n%s", unannounced, dump(w.updates("")))
			}
		})
	}
}
