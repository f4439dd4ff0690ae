//go:build unix

package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/subagent"
)

// TestBackground_ClosingTheSessionDuringTasksLeavesNoProcessAndNoGoroutine
// closes (or deletes) a session while a background command and a
// background child run past the turn that started them: both are stopped
// (cancelled), the command's process is gone, and not one goroutine of
// the session is left.
func TestBackground_ClosingTheSessionDuringTasksLeavesNoProcessAndNoGoroutine(t *testing.T) {
	for _, end := range []struct {
		name string
		call func(h *harness, sid acp.SessionID) error
	}{
		{"session/close", func(h *harness, sid acp.SessionID) error {
			_, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid})
			return err
		}},
		{"session/delete", func(h *harness, sid acp.SessionID) error {
			_, err := h.client.DeleteSession(h.ctx, &acp.DeleteSessionRequest{SessionID: sid})
			return err
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			cwd := t.TempDir()
			pidFile := filepath.Join(cwd, "pid")
			inModel := make(chan struct{}, 1)
			model := st.Model(func(_ context.Context, req *llm.Request) st.Reply {
				if st.LastUser(req) == "CHILD-TASK" {
					inModel <- struct{}{}
					return st.Reply{Block: make(chan struct{})}
				}
				if len(st.ToolResults(req)) == 0 && st.LastUser(req) == "go" {
					return st.Reply{ToolCalls: []llm.ToolCall{
						{ID: "a", Name: "run_command", Arguments: `{"command":"echo $$ > ` + pidFile + `; exec sleep 300","background":true}`},
						{ID: "b", Name: "bg", Arguments: `{"description":"d","prompt":"CHILD-TASK"}`},
					}}
				}
				return st.Reply{Text: "both started"}
			})
			h := newHarness(t, hopts{model: model, mode: permission.ModeYolo, bindings: []subagent.Binding{{ToolName: "bg", Provider: "spawn", Background: true}}})
			h.cwd = cwd
			sid := h.newSession()
			before := goleak.IgnoreCurrent()
			h.mustPrompt(sid, "go", acp.StopReasonEndTurn)
			<-inModel // the child is in its model call, after the turn answered
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("the background command is not running: %v", err)
			}
			if err := end.call(h, sid); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, 0); err == nil {
				t.Errorf("the background command's process %d outlived %s", pid, end.name)
			}
			// A goroutine the connection keeps for its next request
			// handler is the connection's, not the session's.
			goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("github.com/dshd/dshd/acp/rpc.(*conn).handlerLoop"))
		})
	}
}
