// Tests of subagent exposure: with an opted-in client children are
// announced subagent sessions with their own ids; without, nothing of them
// reaches the wire but a permission mirror on the parent.

package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/tools/permission"
)

const subagentScript = `{"rules": [
  {"user": "(?m)^Check the", "text": "Child report for: {{user}}"},
  {"user": "^Hang child", "text": "child waiting", "hang": true},
  {"user": "^Write child", "step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "child.txt", "content": "from the child"}}]},
  {"user": "^Write child", "step": 1, "text": "child wrote: {{tool}}"},
  {"user": "delegate", "step": 0, "text": "Delegating.", "toolCalls": [
    {"name": "subagent", "arguments": {"description": "check the tests", "prompt": "Check the tests"}},
    {"name": "subagent_fork", "arguments": {"description": "check the docs", "prompt": "Check the docs"}}]},
  {"user": "stall", "step": 0, "toolCalls": [{"name": "subagent", "arguments": {"description": "wait", "prompt": "Hang child"}}]},
  {"user": "permit", "step": 0, "toolCalls": [{"name": "subagent", "arguments": {"description": "write", "prompt": "Write child"}}]},
  {"user": ".", "step": 1, "text": "Parent got: {{tool}}"},
  {"text": "You said: {{user}}"}
]}`

// optedIn is the client capability that asks for subagent sessions.
var optedIn = acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}}

// childrenOf returns the child ids announced on parent, in order.
func childrenOf(h *harness, parent acp.SessionID) []acp.SessionID {
	var out []acp.SessionID
	seen := map[acp.SessionID]bool{}
	for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(parent)) {
		if !seen[u.SessionID] {
			seen[u.SessionID] = true
			out = append(out, u.SessionID)
		}
	}
	return out
}

func TestOptedInClientSeesChildrenAsSubagentSessions(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript, caps: optedIn})
	sid := h.newSession()
	h.mustPrompt(sid, "delegate both", acp.StopReasonEndTurn)

	kids := childrenOf(h, sid)
	if len(kids) != 2 {
		t.Fatalf("%d children announced, want 2 (spawn and fork)", len(kids))
	}
	all := h.ed.all()
	for _, kid := range kids {
		if !strings.HasPrefix(string(kid), string(sid)+"/") {
			t.Errorf("child id %q is not under its parent %q", kid, sid)
		}
		// The announcement comes before anything that carries the id.
		announced := false
		for _, n := range all {
			if u, ok := n.Update.(*acp.SubagentUpdate); ok && u.SessionID == kid && n.SessionID == sid {
				if !announced {
					if title, ok := u.Title.Get(); !ok || title == "" {
						t.Errorf("announcement of %s without a title", kid)
					}
				}
				announced = true
				continue
			}
			if n.SessionID == kid && !announced {
				t.Fatalf("%T on %s before its announcement", n.Update, kid)
			}
		}
		us := h.ed.of(kid)
		if got := agentText(us); !strings.HasPrefix(got, "Child report for: ") {
			t.Errorf("child %s said %q", kid, got)
		}
		if len(ofType[*acp.SessionMessage](us)) == 0 {
			t.Errorf("child %s: no session_message with its task", kid)
		}
		// Its last state on the parent is idle with end_turn.
		var last acp.StateUpdate
		for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(sid)) {
			if st, ok := u.State.Get(); ok && u.SessionID == kid {
				last = st
			}
		}
		if idle, ok := last.(*acp.IdleState); !ok || idle.StopReason != acp.StopReasonEndTurn {
			t.Errorf("child %s last state %#v, want idle end_turn", kid, last)
		}
	}
	if got := agentText(h.ed.of(sid)); !strings.Contains(got, "Parent got: ") {
		t.Fatalf("parent said %q", got)
	}
	// The subagent tool calls link to the child sessions.
	linked := 0
	for _, u := range ofType[*acp.ToolCallUpdate](h.ed.of(sid)) {
		for _, c := range u.Content {
			if ref, ok := c.(*acp.SessionReference); ok && strings.HasPrefix(string(ref.SessionID), string(sid)+"/") {
				linked++
			}
		}
	}
	if linked == 0 {
		t.Error("no tool call content links a child session")
	}

	t.Run("methods on child ids are invalid params naming the session", func(t *testing.T) {
		kid := kids[0]
		check := func(method string, err error) {
			t.Helper()
			ae := wantCode(t, method, err, -32602)
			if ae == nil {
				return
			}
			b, _ := json.Marshal(ae.Data)
			if !strings.Contains(string(b), `"sessionId"`) || !strings.Contains(string(b), string(kid)) {
				t.Errorf("%s: data %s does not name the session", method, b)
			}
		}
		_, err := h.prompt(kid, "hello child")
		check("session/prompt", err)
		_, err = h.client.SetSessionMode(h.ctx, &acp.SetSessionModeRequest{SessionID: kid, ModeID: "yolo"})
		check("session/set_mode", err)
		_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: kid, ConfigID: "mode", Value: acp.SelectValue("yolo")})
		check("session/set_config_option", err)
		_, err = h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: kid})
		check("session/close", err)
		_, err = h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: kid, Cwd: h.cwd})
		check("session/load", err)
		_, err = h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: kid, Cwd: h.cwd})
		check("session/resume", err)
		_, err = h.client.DeleteSession(h.ctx, &acp.DeleteSessionRequest{SessionID: kid})
		check("session/delete", err)
	})

	t.Run("children are never listed", func(t *testing.T) {
		list, err := h.client.ListSessions(h.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
			t.Fatalf("list %+v, want only the parent", list.Sessions)
		}
	})

	t.Run("a load replays the children to an opted-in client", func(t *testing.T) {
		if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		h.ed.reset()
		if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
			t.Fatal(err)
		}
		if got := childrenOf(h, sid); len(got) != 2 {
			t.Fatalf("replay announced %v", got)
		}
		if got := agentText(h.ed.of(kids[0])); !strings.HasPrefix(got, "Child report") {
			t.Fatalf("replayed child text %q", got)
		}
	})
}

func TestOptedInClientCancelsOneChild(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript, caps: optedIn})
	sid := h.newSession()
	turn := h.promptAsync(sid, "stall")
	var kid acp.SessionID
	h.ed.waitUntil(h.ctx, t, "the child's first words", func() bool {
		for _, k := range childrenOf(h, sid) {
			if agentText(h.ed.of(k)) == "child waiting" {
				kid = k
				return true
			}
		}
		return false
	})
	var cancellable bool
	for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(sid)) {
		if caps, ok := u.Capabilities.Get(); ok && u.SessionID == kid {
			cancellable = caps.Cancel != nil
		}
	}
	if !cancellable {
		t.Fatal("the child was not announced as cancellable")
	}
	h.cancel(kid)
	// Only the child stops: the parent reads its result and ends normally.
	r := h.await(turn)
	if r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("parent turn %v, %v; want end_turn", r.stop, r.err)
	}
	var last acp.StateUpdate
	for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(sid)) {
		if st, ok := u.State.Get(); ok && u.SessionID == kid {
			last = st
		}
	}
	if idle, ok := last.(*acp.IdleState); !ok || idle.StopReason != acp.StopReasonCancelled {
		t.Fatalf("child's last state %#v, want idle cancelled", last)
	}
	if got := agentText(h.ed.of(sid)); !strings.Contains(got, "Parent got:") {
		t.Fatalf("parent said %q", got)
	}
}

func TestOptedInPermissionIsAskedOnTheChildSession(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript, caps: optedIn})
	var asked acp.SessionID
	h.ed.set(func(e *editor) {
		e.permission = func(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
			asked = req.SessionID
			return &acp.RequestPermissionResponse{Outcome: acp.Selected("allow_once")}, nil
		}
	})
	sid := h.newSession()
	h.mustPrompt(sid, "permit", acp.StopReasonEndTurn)
	kids := childrenOf(h, sid)
	if len(kids) != 1 || asked != kids[0] {
		t.Fatalf("permission asked on %q, want the child %v", asked, kids)
	}
	sawRequiresAction := false
	for _, u := range ofType[*acp.SubagentUpdate](h.ed.of(sid)) {
		if st, ok := u.State.Get(); ok {
			if _, ok := st.(*acp.RequiresActionState); ok {
				sawRequiresAction = true
			}
		}
	}
	if !sawRequiresAction {
		t.Error("the child was not shown as requires_action while asking")
	}
	if b, err := os.ReadFile(filepath.Join(h.cwd, "child.txt")); err != nil || string(b) != "from the child" {
		t.Fatalf("child.txt: %q, %v", b, err)
	}
}

func TestFallbackClientSeesNoChildIds(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript})
	sid := h.newSession()
	h.mustPrompt(sid, "delegate both", acp.StopReasonEndTurn)
	for _, n := range h.ed.all() {
		if n.SessionID != sid {
			t.Errorf("%T on session %q", n.Update, n.SessionID)
		}
		switch u := n.Update.(type) {
		case *acp.SubagentUpdate, *acp.SessionMessage, *acp.SessionMessageChunk:
			t.Errorf("subagent update %T sent to a client that did not opt in", u)
		case *acp.ToolCall:
			noSessionContent(t, u.Content)
		case *acp.ToolCallUpdate:
			noSessionContent(t, u.Content)
		}
	}
	if got := agentText(h.ed.of(sid)); !strings.Contains(got, "Parent got: ") || !strings.Contains(got, "Child report") {
		t.Fatalf("parent said %q, want the child's report", got)
	}
}

func noSessionContent(t *testing.T, cs []acp.ToolCallContent) {
	t.Helper()
	for _, c := range cs {
		if _, ok := c.(*acp.SessionReference); ok {
			t.Error("a session content item sent to a client that did not opt in")
		}
	}
}

func TestFallbackPermissionIsMirroredAsAParentToolCallFirst(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript, mode: permission.ModeAsk})
	var req *acp.RequestPermissionRequest
	var before []acp.SessionUpdate
	h.ed.set(func(e *editor) {
		e.permission = func(_ context.Context, r *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
			req = r
			before = h.ed.of("")
			return &acp.RequestPermissionResponse{Outcome: acp.Selected("allow_once")}, nil
		}
	})
	sid := h.newSession()
	h.mustPrompt(sid, "permit", acp.StopReasonEndTurn)
	if req == nil {
		t.Fatal("no permission request")
	}
	if req.SessionID != sid {
		t.Fatalf("asked on %q, want the parent %q", req.SessionID, sid)
	}
	id := string(req.ToolCall.ToolCallID)
	if i := strings.LastIndexByte(id, '/'); i <= 0 || i == len(id)-1 {
		t.Fatalf("mirror tool call id %q, want <child call>/<unique suffix>", id)
	}
	var mirror *acp.ToolCall
	for _, tc := range ofType[*acp.ToolCall](before) {
		if string(tc.ToolCallID) == id {
			mirror = tc
		}
	}
	if mirror == nil {
		t.Fatalf("no tool_call %q before the permission request", id)
	}
	if !strings.HasPrefix(mirror.Title, "Subagent: ") || mirror.Status != acp.ToolCallStatusPending {
		t.Fatalf("mirror %+v", mirror)
	}
	done := false
	for _, u := range ofType[*acp.ToolCallUpdate](h.ed.of(sid)) {
		if string(u.ToolCallID) == id && u.Status == acp.ToolCallStatusCompleted {
			done = true
		}
	}
	if !done {
		t.Fatal("the mirror tool call was not completed after the answer")
	}
	if b, err := os.ReadFile(filepath.Join(h.cwd, "child.txt")); err != nil || string(b) != "from the child" {
		t.Fatalf("child.txt: %q, %v", b, err)
	}
	for _, n := range h.ed.all() {
		if n.SessionID != sid {
			t.Fatalf("update on %q", n.SessionID)
		}
	}
}
