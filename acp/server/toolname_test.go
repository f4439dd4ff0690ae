// Tests of the tool's name on tool calls (schema 1.22, acp-v1 §23.1):
// every tool_call and tool_call_update names the tool it belongs to, on
// the parent, on an exposed child and on a permission mirror.

package server_test

import (
	"context"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/tools/permission"
)

// namesOf maps each tool call id to the names its tool_call and
// tool_call_update updates carried, failing on one without a name.
func namesOf(t *testing.T, ns []*acp.SessionNotification) map[acp.ToolCallID][]string {
	t.Helper()
	out := map[acp.ToolCallID][]string{}
	for _, n := range ns {
		switch u := n.Update.(type) {
		case *acp.ToolCall:
			if u.Name == "" {
				t.Errorf("tool_call %s (%q) on %s has no name", u.ToolCallID, u.Title, n.SessionID)
			}
			out[u.ToolCallID] = append(out[u.ToolCallID], u.Name)
		case *acp.ToolCallUpdate:
			if u.Name == "" {
				t.Errorf("tool_call_update %s (status %q) on %s has no name", u.ToolCallID, u.Status, n.SessionID)
			}
			out[u.ToolCallID] = append(out[u.ToolCallID], u.Name)
		}
	}
	return out
}

func TestEveryToolCallAndUpdateNamesItsTool(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps acp.ClientCapabilities
	}{
		{"a client that sees subagent sessions", optedIn},
		{"a client that does not", acp.ClientCapabilities{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, hopts{script: subagentScript, caps: tc.caps})
			sid := h.newSession()
			h.mustPrompt(sid, "delegate both", acp.StopReasonEndTurn)
			names := namesOf(t, h.ed.all())
			seen := map[string]bool{}
			for id, ns := range names {
				for _, n := range ns {
					if n != ns[0] {
						t.Errorf("tool call %s is named %q and %q", id, ns[0], n)
					}
				}
				seen[ns[0]] = true
			}
			for _, want := range []string{"subagent", "subagent_fork"} {
				if !seen[want] {
					t.Errorf("no tool call named %q among %v", want, names)
				}
			}
		})
	}
}

func TestAPermissionMirrorAndItsQuestionNameTheChildsTool(t *testing.T) {
	h := newHarness(t, hopts{script: subagentScript, mode: permission.ModeAsk})
	var asked string
	h.ed.set(func(e *editor) {
		e.permission = func(_ context.Context, r *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
			asked = r.ToolCall.Name
			return &acp.RequestPermissionResponse{Outcome: acp.Selected("allow_once")}, nil
		}
	})
	sid := h.newSession()
	h.mustPrompt(sid, "permit", acp.StopReasonEndTurn)
	if asked != "write_file" {
		t.Errorf("the permission request's toolCall names %q, want write_file", asked)
	}
	found := false
	for _, ns := range namesOf(t, h.ed.all()) {
		found = found || ns[0] == "write_file"
	}
	if !found {
		t.Error("no tool call (the mirror) named write_file")
	}
}
