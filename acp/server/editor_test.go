// Tests of what tools reach through the editor: fs/* for files, terminal/*
// for commands, and session/request_permission.

package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/tools/permission"
)

const editorScript = `{"rules": [
  {"user": "^read", "step": 0, "toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
  {"user": "^write", "step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "f.txt", "content": "{{user}}"}}]},
  {"user": "^run", "step": 0, "toolCalls": [{"name": "run_command", "arguments": {"command": "echo hi"}}]},
  {"user": ".", "step": 1, "text": "Result: {{tool}}"},
  {"text": "You said: {{user}}"}
]}`

func TestEditorFileSystem(t *testing.T) {
	caps := acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}

	t.Run("read_file reads through the editor", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, caps: caps})
		var got *acp.ReadTextFileRequest
		h.ed.set(func(e *editor) {
			e.readFile = func(_ context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
				got = req
				return &acp.ReadTextFileResponse{Content: "unsaved buffer text\n"}, nil
			}
		})
		sid := h.newSession()
		h.mustPrompt(sid, "read it", acp.StopReasonEndTurn)
		if got == nil || got.Path != filepath.Join(h.cwd, "a.txt") || got.SessionID != sid {
			t.Fatalf("fs/read_text_file %+v, want the absolute path in the session", got)
		}
		if text := agentText(h.ed.of(sid)); !strings.Contains(text, "unsaved buffer text") {
			t.Fatalf("the model saw %q", text)
		}
	})

	t.Run("an editor's resource-not-found is a missing file for the tool", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, caps: caps})
		h.ed.set(func(e *editor) {
			e.readFile = func(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
				return nil, acp.ErrResourceNotFound
			}
		})
		sid := h.newSession()
		h.mustPrompt(sid, "read it", acp.StopReasonEndTurn)
		if text := agentText(h.ed.of(sid)); !strings.Contains(text, "does not exist") {
			t.Fatalf("the model saw %q, want a missing file", text)
		}
		failed := false
		for _, u := range ofType[*acp.ToolCallUpdate](h.ed.of(sid)) {
			failed = failed || u.Status == acp.ToolCallStatusFailed
		}
		if !failed {
			t.Fatal("the read did not fail")
		}
	})

	t.Run("write_file writes through the editor", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, caps: caps, mode: permission.ModeYolo})
		var got *acp.WriteTextFileRequest
		h.ed.set(func(e *editor) {
			e.readFile = func(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
				return nil, acp.ErrResourceNotFound
			}
			e.writeFile = func(_ context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
				got = req
				return &acp.WriteTextFileResponse{}, nil
			}
		})
		sid := h.newSession()
		h.mustPrompt(sid, "write this", acp.StopReasonEndTurn)
		if got == nil || got.Path != filepath.Join(h.cwd, "f.txt") || got.Content != "write this" {
			t.Fatalf("fs/write_text_file %+v", got)
		}
		if _, err := os.Stat(filepath.Join(h.cwd, "f.txt")); !os.IsNotExist(err) {
			t.Fatalf("the file was written to disk too: %v", err)
		}
	})
}

func TestEditorTerminalRunner(t *testing.T) {
	caps := acp.ClientCapabilities{Terminal: true}

	t.Run("a command runs in an editor terminal that is released", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, caps: caps, mode: permission.ModeYolo})
		var created *acp.CreateTerminalRequest
		zero := uint32(0)
		h.ed.set(func(e *editor) {
			e.createTerminal = func(_ context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
				created = req
				return &acp.CreateTerminalResponse{TerminalID: "term-1"}, nil
			}
			e.waitExit = func(context.Context, *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
				return &acp.WaitForTerminalExitResponse{ExitCode: &zero}, nil
			}
			e.output = func(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
				return &acp.TerminalOutputResponse{Output: "hi from the editor terminal\n", ExitStatus: &acp.TerminalExitStatus{ExitCode: &zero}}, nil
			}
		})
		sid := h.newSession()
		h.mustPrompt(sid, "run it", acp.StopReasonEndTurn)
		if created == nil || created.SessionID != sid || !strings.Contains(created.Command+" "+strings.Join(created.Args, " "), "echo hi") {
			t.Fatalf("terminal/create %+v", created)
		}
		if n := h.ed.callsOf(acp.MethodTerminalRelease); n != 1 {
			t.Fatalf("terminal/release called %d times, want 1", n)
		}
		if text := agentText(h.ed.of(sid)); !strings.Contains(text, "hi from the editor terminal") {
			t.Fatalf("the model saw %q", text)
		}
		embedded := false
		for _, u := range ofType[*acp.ToolCallUpdate](h.ed.of(sid)) {
			for _, c := range u.Content {
				if term, ok := c.(*acp.Terminal); ok && term.TerminalID == "term-1" {
					embedded = true
				}
			}
		}
		if !embedded {
			t.Fatal("the tool call does not embed the terminal")
		}
	})

	t.Run("cancel kills and releases the terminal", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, caps: caps, mode: permission.ModeYolo})
		waiting := make(chan struct{})
		var once sync.Once
		h.ed.set(func(e *editor) {
			e.createTerminal = func(context.Context, *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
				return &acp.CreateTerminalResponse{TerminalID: "term-2"}, nil
			}
			e.waitExit = func(ctx context.Context, _ *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
				once.Do(func() { close(waiting) })
				<-ctx.Done() // a command that never ends, until the agent gives up
				return nil, ctx.Err()
			}
		})
		sid := h.newSession()
		turn := h.promptAsync(sid, "run forever")
		h.waitFor(waiting, "the command never started")
		h.cancelTurn(sid, turn)
		if h.ed.callsOf(acp.MethodTerminalKill) != 1 || h.ed.callsOf(acp.MethodTerminalRelease) != 1 {
			t.Fatalf("kill %d, release %d; want one each", h.ed.callsOf(acp.MethodTerminalKill), h.ed.callsOf(acp.MethodTerminalRelease))
		}
	})
}

// answer returns a permission hook that picks optionID and counts calls.
func answer(optionID string, n *int) func(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return func(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
		*n++
		return &acp.RequestPermissionResponse{Outcome: acp.Selected(optionID)}, nil
	}
}

func TestPermissionFlows(t *testing.T) {
	read := func(h *harness) string {
		b, _ := os.ReadFile(filepath.Join(h.cwd, "f.txt"))
		return string(b)
	}
	lastStatus := func(h *harness, sid acp.SessionID) acp.ToolCallStatus {
		var st acp.ToolCallStatus
		for _, u := range h.ed.of(sid) {
			if tu, ok := u.(*acp.ToolCallUpdate); ok && tu.Status != "" {
				st = tu.Status
			}
		}
		return st
	}

	for _, tt := range []struct {
		name, option string
		prompts      []string
		asked        int
		file         string
		status       acp.ToolCallStatus // of the last tool call; "" is not checked
	}{
		{"allow_once allows this call only", "allow_once", []string{"write one", "write two"}, 2, "write two", ""},
		{"allow_always is remembered", "allow_always", []string{"write one", "write two"}, 1, "write two", ""},
		{"reject fails the tool call and writes nothing", "reject_once", []string{"write one"}, 1, "", acp.ToolCallStatusFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, hopts{script: editorScript, mode: permission.ModeAsk})
			var asked int
			h.ed.set(func(e *editor) { e.permission = answer(tt.option, &asked) })
			sid := h.newSession()
			for _, p := range tt.prompts {
				h.mustPrompt(sid, p, acp.StopReasonEndTurn)
			}
			if asked != tt.asked || read(h) != tt.file || (tt.status != "" && lastStatus(h, sid) != tt.status) {
				t.Fatalf("asked %d times, file %q, last status %q; want %d, %q, %q", asked, read(h), lastStatus(h, sid), tt.asked, tt.file, tt.status)
			}
		})
	}

	t.Run("the request names the announced tool call", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, mode: permission.ModeAsk})
		var req *acp.RequestPermissionRequest
		var before []acp.SessionUpdate
		h.ed.set(func(e *editor) {
			e.permission = func(_ context.Context, r *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
				req, before = r, h.ed.of(r.SessionID)
				return &acp.RequestPermissionResponse{Outcome: acp.Selected("allow_once")}, nil
			}
		})
		sid := h.newSession()
		h.mustPrompt(sid, "write one", acp.StopReasonEndTurn)
		calls := ofType[*acp.ToolCall](before)
		if req == nil || len(calls) != 1 || calls[0].ToolCallID != req.ToolCall.ToolCallID {
			t.Fatalf("request %+v after tool calls %+v", req, calls)
		}
		kinds := map[acp.PermissionOptionKind]bool{}
		for _, o := range req.Options {
			kinds[o.Kind] = true
		}
		if !kinds[acp.PermissionAllowOnce] || !kinds[acp.PermissionAllowAlways] || !kinds[acp.PermissionRejectOnce] {
			t.Fatalf("options %+v", req.Options)
		}
	})

	t.Run("cancel during a pending request cancels the turn and ignores a late answer", func(t *testing.T) {
		h := newHarness(t, hopts{script: editorScript, mode: permission.ModeAsk})
		pending := make(chan struct{})
		late := make(chan struct{})
		answered := make(chan struct{})
		h.ed.set(func(e *editor) {
			e.permission = func(ctx context.Context, _ *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
				close(pending)
				<-late // the user answers only after the turn is over
				defer close(answered)
				return &acp.RequestPermissionResponse{Outcome: acp.Selected("allow_once")}, nil
			}
		})
		sid := h.newSession()
		turn := h.promptAsync(sid, "write too late")
		h.waitFor(pending, "permission never asked")
		h.cancelTurn(sid, turn)
		if st := lastStatus(h, sid); st != acp.ToolCallStatusFailed {
			t.Fatalf("the tool call ended %q, want failed", st)
		}
		close(late)
		<-answered
		// A full turn after the late answer: it was read and ignored.
		h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
		if got := read(h); got != "" {
			t.Fatalf("the late allow wrote %q", got)
		}
	})
}
