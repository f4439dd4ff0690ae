// End-to-end test of a subagent's permission question for a client that
// does not see subagent sessions (issue 11, item 16): the question names
// a tool call the client was shown on the parent's stream before.

package main

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAChildsPermissionQuestionNamesAToolCallTheClientWasShown(t *testing.T) {
	for _, provider := range []string{"spawn", "acp"} {
		t.Run(provider, func(t *testing.T) {
			ctx := testkit.Context(t)
			srv := fakeModel(t)
			delegation{via: "sub", call: childWritesNote}.serve(srv)
			p, w := fakeDaemon(t, srv, "--subagent", "sub="+provider)
			var mu sync.Mutex
			var unannounced []string
			var sid string
			w.handleRequests(func(m *msg) (any, *rpcErr) {
				if m.Method != "session/request_permission" {
					return nil, notFound
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
			w.endTurn(ctx, sid, "delegate this")
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
