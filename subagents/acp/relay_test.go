//go:build unix

package acpprovider_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

// emitted is one relayed update.
type emitted struct {
	child  string
	update map[string]any
}

// relayed parses the exposure's emitraw lines.
func relayed(t testing.TB, e *st.Exposure) []emitted {
	t.Helper()
	var out []emitted
	for _, l := range e.Lines() {
		rest, ok := strings.CutPrefix(l, "emitraw ")
		if !ok {
			continue
		}
		child, raw, _ := strings.Cut(rest, " ")
		var u map[string]any
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			t.Fatalf("relayed update %q: %v", raw, err)
		}
		out = append(out, emitted{child: child, update: u})
	}
	return out
}

// agentIDs matches session ids minted by a child dshd or the fake agent,
// which must never reach the editor.
var agentIDs = regexp.MustCompile(`s_[0-9a-f]{8}-|fs_[0-9]+_|echo-[0-9a-f]{8}-`)

func checkNoAgentIDs(t testing.TB, e *st.Exposure) {
	t.Helper()
	for _, l := range e.Lines() {
		if agentIDs.MatchString(l) {
			t.Errorf("an agent-side session id reached the editor: %s", l)
		}
	}
}

func TestExpose_AChildDshdIsAnnouncedAndItsUpdatesRelayed(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	parent := newParent(t, parentOpts{expose: exp})
	run := start(t, p, subagents.StartRequest{Prompt: "check the docs", Description: "docs check", Name: "helper", Parent: parent.Scope, Options: dshdBinding(t, "echo.json")})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.ChildSessionID != "s_main/sa1" || res.Output != "You said: check the docs" {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	var calls []string // everything but the relayed updates
	for _, l := range exp.Lines() {
		if !strings.HasPrefix(l, "emitraw ") {
			calls = append(calls, l)
		}
	}
	want := []string{"announce s_main/sa1 on s_main", "message s_main -> s_main/sa1: check the docs", "state s_main/sa1 running", "state s_main/sa1 idle completed", "forget s_main/sa1"}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls = %q", calls)
	}
	a, _ := exp.Announcement("s_main/sa1")
	if a.Title != "helper" || a.Description != "docs check" || a.Cancel == nil || a.Cwd != "" {
		t.Fatalf("announcement = %+v", a)
	}
	var text string
	for _, e := range relayed(t, exp) {
		if e.child != "s_main/sa1" {
			t.Errorf("relayed on %s", e.child)
		}
		if e.update["sessionUpdate"] == "agent_message_chunk" {
			text += e.update["content"].(map[string]any)["text"].(string)
		}
	}
	if text != "You said: check the docs" {
		t.Fatalf("relayed text %q", text)
	}
	checkNoAgentIDs(t, exp)
}

func TestExpose_TheAgentsChildrenAreReannouncedUnderTheChild(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	// While the grandchild's question is asked, the editor cancels the
	// grandchild: the agent granted it, so the cancel reaches the agent.
	gate := &recGate{decide: func(tools.PermissionRequest) tools.Decision {
		a, _ := exp.Announcement("s_main/sa1/sa2")
		a.Cancel()
		return tools.Allowed
	}}
	parent := newParent(t, parentOpts{expose: exp, gate: gate})
	run := start(t, p, subagents.StartRequest{Prompt: "relay", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
	if res := wait(t, run); res.Output != "grandchild permission: ok, grandchild cancelled" {
		t.Fatalf("result = %+v", res)
	}
	lines := exp.Lines()
	if !slices.Contains(lines, "announce s_main/sa1/sa2 on s_main/sa1") {
		t.Fatalf("the grandchild was not announced under the child: %q", lines)
	}
	a, _ := exp.Announcement("s_main/sa1/sa2")
	if a.Title != "helper" || a.Description != "does things" || a.Cancel == nil {
		t.Fatalf("announcement = %+v", a)
	}
	announced := slices.Index(lines, "announce s_main/sa1/sa2 on s_main/sa1")
	var sawMessage, sawLink, sawChunk, sawIdle bool
	for i, l := range lines {
		if !strings.Contains(l, "s_main/sa1/sa2") {
			continue
		}
		if i < announced {
			t.Errorf("line %d names the grandchild before its announcement: %s", i, l)
		}
	}
	for _, e := range relayed(t, exp) {
		u := e.update
		switch u["sessionUpdate"] {
		case "session_message":
			sawMessage = e.child == "s_main/sa1" && u["senderSessionId"] == "s_main/sa1" && u["recipientSessionId"] == "s_main/sa1/sa2"
		case "tool_call":
			if u["toolCallId"] == "tc_link" {
				items := u["content"].([]any)
				sawLink = items[1].(map[string]any)["sessionId"] == "s_main/sa1/sa2"
			}
		case "agent_message_chunk":
			if e.child == "s_main/sa1/sa2" {
				sawChunk = true
			}
		case "subagent_update":
			if e.child == "s_main/sa1" && u["sessionId"] == "s_main/sa1/sa2" {
				if s, ok := u["state"].(map[string]any); ok && s["state"] == "idle" && s["stopReason"] == "cancelled" {
					sawIdle = true
				}
			}
		}
	}
	if !sawMessage || !sawLink || !sawChunk || !sawIdle {
		t.Fatalf("message %v, link %v, chunk %v, idle %v in %q", sawMessage, sawLink, sawChunk, sawIdle, lines)
	}
	reqs := gate.requests()
	if len(reqs) != 1 || reqs[0].Requester != "s_main/sa1/sa2" || reqs[0].ToolCallID != "tc_g" || reqs[0].Effect != tools.EffectEdit {
		t.Fatalf("gate saw %+v", reqs)
	}
	run.Dispose()
	last := exp.Lines()
	if !slices.Contains(last, "forget s_main/sa1/sa2") || !slices.Contains(last, "forget s_main/sa1") {
		t.Fatalf("routes not forgotten: %q", last)
	}
	checkNoAgentIDs(t, exp)
}

func TestExpose_WithoutAnEditorViewTheAgentsChildrenAreNotServed(t *testing.T) {
	p := newProvider(t, nil)
	gate := &recGate{}
	parent := newParent(t, parentOpts{gate: gate})
	run := start(t, p, subagents.StartRequest{Prompt: "relay", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
	if res := wait(t, run); res.Output != "grandchild permission: error, grandchild end_turn" {
		t.Fatalf("result = %+v", res)
	}
	if len(gate.requests()) != 0 {
		t.Fatalf("the gate was asked for an unannounced session: %+v", gate.requests())
	}
}

func TestExpose_AGrandchildOfARealDshdIsRelayedAndItsPermissionReachesTheGate(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	gate := &recGate{}
	parent := newParent(t, parentOpts{expose: exp, gate: gate})
	run := start(t, p, subagents.StartRequest{Prompt: "delegate the report", Parent: parent.Scope, Options: dshdBinding(t, "delegate.json")})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, "Grandchild wrote:") {
		t.Fatalf("result = %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(parent.Scope.Cwd, "report.txt"))
	if err != nil || string(b) != "from the grandchild" {
		t.Fatalf("report.txt = %q, %v", b, err)
	}
	lines := exp.Lines()
	if !slices.Contains(lines, "announce s_main/sa1/sa2 on s_main/sa1") {
		t.Fatalf("the grandchild was not announced under the child: %q", lines)
	}
	// One question, asked for the grandchild, about its own tool call; the
	// write that carried it out was not asked again.
	reqs := gate.requests()
	if len(reqs) != 1 || reqs[0].Requester != "s_main/sa1/sa2" || reqs[0].Effect != tools.EffectEdit {
		t.Fatalf("gate saw %+v", reqs)
	}
	var announcedCall bool
	for _, e := range relayed(t, exp) {
		if e.child == "s_main/sa1/sa2" && e.update["sessionUpdate"] == "tool_call" && e.update["toolCallId"] == reqs[0].ToolCallID {
			announcedCall = true
		}
	}
	if !announcedCall {
		t.Fatalf("the grandchild's tool call %s was not relayed on its stream", reqs[0].ToolCallID)
	}
	run.Dispose()
	checkNoAgentIDs(t, exp)
	checkNoProcesses(t)
}
