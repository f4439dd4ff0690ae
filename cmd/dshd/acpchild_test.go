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
	"github.com/dshd/dshd/internal/testkit"
)

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
	return nil, notFound
}

// childRunsEchoHi has the child run `echo hi` through subagent_acp, its
// two calls reporting known usage.
var childRunsEchoHi = delegation{
	via:   "subagent_acp",
	call:  openaitest.ToolCall{ID: "c1", Name: "run_command", Arguments: `{"command":"echo hi"}`},
	usage: [2]*openaitest.Usage{{PromptTokens: 1000, CompletionTokens: 50}, {PromptTokens: 1100, CompletionTokens: 60}},
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
			ctx := testkit.Context(t)
			srv := fakeModel(t)
			childRunsEchoHi.serve(srv)
			p, w := fakeDaemon(t, srv, "--mode", "yolo", "--subagent", "subagent_acp=acp")
			w.handleRequests(tc.handler())
			w.initialize(ctx, map[string]any{"terminal": true})
			sid := w.newSession(ctx, t.TempDir())
			w.endTurn(ctx, sid, "delegate this")
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
