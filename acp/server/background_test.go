package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
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
		e.waitExit = exitsWhen(exited)
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

// exitsWhen is a terminal/wait_for_exit that answers exit code 0 once
// exited is closed.
func exitsWhen(exited <-chan struct{}) func(context.Context, *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	return func(ctx context.Context, _ *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
		select {
		case <-exited:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		zero := uint32(0)
		return &acp.WaitForTerminalExitResponse{ExitCode: &zero}, nil
	}
}

// TestBackground_OutputPastTheLimitOfAnEditorThatCutsAsAskedReachesTheTask
// runs a background command in the terminal of an editor that keeps the
// last outputByteLimit bytes, as ACP asks: once the output filled the
// limit its length stops growing, and what the command printed after
// that must still reach the task.
func TestBackground_OutputPastTheLimitOfAnEditorThatCutsAsAskedReachesTheTask(t *testing.T) {
	exited := make(chan struct{})
	h := newHarness(t, hopts{model: startThenWait(), caps: acp.ClientCapabilities{Terminal: true}, mode: permission.ModeYolo})
	zero := uint32(0)
	var limit atomic.Int64
	var polls atomic.Int32
	// cut keeps the last limit bytes of out, as the editor is asked to.
	cut := func(out string) (string, bool) {
		if n := int(limit.Load()); len(out) > n {
			return out[len(out)-n:], true
		}
		return out, false
	}
	h.ed.set(func(e *editor) {
		e.createTerminal = func(_ context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
			limit.Store(int64(*req.OutputByteLimit))
			return &acp.CreateTerminalResponse{TerminalID: "term-cut"}, nil
		}
		e.waitExit = exitsWhen(exited)
		e.output = func(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
			polls.Add(1)
			// The command fills the limit and more at once; after the
			// test lets it exit, it has printed one line more.
			out := strings.Repeat("x", int(limit.Load())+100) + "\n"
			select {
			case <-exited:
				kept, truncated := cut(out + "STOPPED-MARK\n")
				return &acp.TerminalOutputResponse{Output: kept, Truncated: truncated, ExitStatus: &acp.TerminalExitStatus{ExitCode: &zero}}, nil
			default:
				kept, truncated := cut(out)
				return &acp.TerminalOutputResponse{Output: kept, Truncated: truncated}, nil
			}
		}
	})
	sid := h.newSession()
	h.mustPrompt(sid, "go", acp.StopReasonEndTurn)
	h.ed.waitUntil(h.ctx, t, "a poll of the terminal", func() bool { return polls.Load() > 0 })
	close(exited)
	h.mustPrompt(sid, "wait", acp.StopReasonEndTurn)
	if text := agentText(h.ed.of(sid)); !strings.Contains(text, "WAITED: ") || !strings.Contains(text, "STOPPED-MARK") {
		t.Fatalf("the model's wait did not see the output printed after the limit filled: %.300q…", text[max(0, len(text)-300):])
	}
}

// What a poll adds to the last one: the growth of an output that was
// not cut, and what follows the overlap of one whose start an editor cut.
func TestFresh_IsWhatFollowsTheLastPollsOutput(t *testing.T) {
	for _, tc := range []struct{ prev, cur, want string }{
		{"", "", ""},
		{"", "abc", "abc"},
		{"abc", "abc", ""},
		{"abc", "abcdef", "def"},
		{"abcdef", "cdefgh", "gh"},   // cut by two, two new
		{"abcdef", "efghij", "ghij"}, // cut by four, four new
		{"abcdef", "ghijkl", "ghijkl"},
		{"aaaa", "aaab", "b"},
		{"xabab", "ababz", "z"},
		{"abcdef", "def", ""}, // the limit shrank: nothing new
	} {
		if got := server.Fresh(tc.prev, tc.cur); got != tc.want {
			t.Errorf("fresh(%q, %q) = %q, want %q", tc.prev, tc.cur, got, tc.want)
		}
	}
}
