package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/subagent"
)

// startThenWait is a model that starts a background command at the
// prompt "go" and, at the prompt "wait", waits for it (task t1) and
// answers "WAITED: " and the wait's result.
func startThenWait() llm.Model {
	return st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		res := st.ToolResults(req)
		switch {
		case len(res) == 0 && st.LastUser(req) == "go":
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "a", Name: "run_command", Arguments: `{"command":"make serve","background":true}`}}}
		case len(res) == 0 && st.LastUser(req) == "wait":
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "w", Name: "task_wait", Arguments: `{"id":"t1"}`}}}
		case st.LastUser(req) == "wait":
			return st.Reply{Text: "WAITED: " + res[0]}
		}
		return st.Reply{Text: "started"}
	})
}

// TestBackground_ACommandInTheEditorsTerminalIsShownThereAndOutlivesItsTurn
// runs a background command where the editor offers terminals: the call's
// content embeds the terminal, which stays until the command ends after
// the turn, and the task gets the terminal's output.
func TestBackground_ACommandInTheEditorsTerminalIsShownThereAndOutlivesItsTurn(t *testing.T) {
	exited := make(chan struct{})
	h := newHarness(t, hopts{model: startThenWait(), caps: acp.ClientCapabilities{Terminal: true}, mode: permission.ModeYolo})
	zero := uint32(0)
	h.ed.set(func(e *editor) {
		e.createTerminal = func(context.Context, *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
			return &acp.CreateTerminalResponse{TerminalID: "term-bg"}, nil
		}
		e.waitExit = func(ctx context.Context, _ *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
			select {
			case <-exited:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &acp.WaitForTerminalExitResponse{ExitCode: &zero}, nil
		}
		e.output = func(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
			select {
			case <-exited:
				return &acp.TerminalOutputResponse{Output: "listening\nstopped\n", ExitStatus: &acp.TerminalExitStatus{ExitCode: &zero}}, nil
			default:
				return &acp.TerminalOutputResponse{Output: "listening\n"}, nil
			}
		}
	})
	sid := h.newSession()
	h.mustPrompt(sid, "go", acp.StopReasonEndTurn)
	embedded := false
	for _, u := range ofType[*acp.ToolCallUpdate](h.ed.of(sid)) {
		for _, c := range u.Content {
			if term, ok := c.(*acp.Terminal); ok && term.TerminalID == "term-bg" && u.Status == acp.ToolCallStatusCompleted {
				embedded = true
			}
		}
	}
	if !embedded {
		t.Fatal("the background call's result does not embed the editor's terminal")
	}
	if n := h.ed.callsOf(acp.MethodTerminalRelease); n != 0 {
		t.Fatalf("the terminal was released %d times while its command runs", n)
	}
	close(exited)
	h.mustPrompt(sid, "wait", acp.StopReasonEndTurn)
	if text := agentText(h.ed.of(sid)); !strings.Contains(text, "WAITED: ") || !strings.Contains(text, "stopped") || !strings.Contains(text, "exit code 0") {
		t.Fatalf("the model's wait saw %q", text)
	}
	h.ed.waitUntil(h.ctx, t, "the terminal's release", func() bool { return h.ed.callsOf(acp.MethodTerminalRelease) == 1 })
}

// TestBackground_TheEditorCancelsABackgroundChildThroughItsSession cancels
// a background child the opted-in editor sees, after the turn that
// started it answered: the child goes idle cancelled and so does its task.
func TestBackground_TheEditorCancelsABackgroundChildThroughItsSession(t *testing.T) {
	inModel := make(chan struct{}, 1)
	model := st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		res := st.ToolResults(req)
		switch {
		case st.LastUser(req) == "CHILD-TASK":
			inModel <- struct{}{}
			return st.Reply{Block: make(chan struct{})}
		case len(res) == 0 && st.LastUser(req) == "go":
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "b", Name: "bg", Arguments: `{"description":"d","prompt":"CHILD-TASK"}`}}}
		case len(res) == 0 && st.LastUser(req) == "wait":
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "w", Name: "task_wait", Arguments: `{"id":"t1"}`}}}
		case st.LastUser(req) == "wait":
			return st.Reply{Text: "WAITED: " + res[0]}
		}
		return st.Reply{Text: "started"}
	})
	h := newHarness(t, hopts{model: model, caps: acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}}, mode: permission.ModeYolo,
		bindings: []subagent.Binding{{ToolName: "bg", Provider: "spawn", Background: true}}})
	sid := h.newSession()
	h.mustPrompt(sid, "go", acp.StopReasonEndTurn)
	<-inModel
	kids := childrenOf(h, sid)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	h.cancel(kids[0])
	h.mustPrompt(sid, "wait", acp.StopReasonEndTurn)
	if text := agentText(h.ed.of(sid)); !strings.Contains(text, "WAITED: ") || !strings.Contains(text, "cancelled") {
		t.Fatalf("the model's wait saw %q", text)
	}
	h.ed.waitUntil(h.ctx, t, "the child's idle state", func() bool {
		for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(sid)) {
			if st, ok := u.State.Get(); ok {
				if idle, ok := st.(*acp.IdleState); ok && idle.StopReason == acp.StopReasonCancelled {
					return true
				}
			}
		}
		return false
	})
}
