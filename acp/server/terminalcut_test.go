package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/tools/permission"
)

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
		e.waitExit = func(ctx context.Context, _ *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
			select {
			case <-exited:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &acp.WaitForTerminalExitResponse{ExitCode: &zero}, nil
		}
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
