// Tests of compaction updates: a client that advertised
// session.compaction sees each compaction start and end where it happened,
// and a load replays the completed compaction; any other client sees
// none, live or replayed.

package server_test

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
)

// compactScript answers the summariser with a fixed summary and every
// prompt with a long answer, so that a tiny window fills after one turn.
const compactScript = `{"rules": [
  {"system": "replaced by a summary", "text": "SUMMARY: the user said hello twice."},
  {"text": "You said: {{user}} and here is a long answer that fills the window quickly"}
]}`

var compactionCaps = acp.ClientCapabilities{Session: acp.ClientSessionCapabilities{Compaction: &acp.EmptyCapability{}}}

func compactingHarness(t *testing.T, caps acp.ClientCapabilities) *harness {
	return newHarness(t, hopts{script: compactScript, caps: caps, opts: func(o *server.Options) { o.ContextWindow = 40 }})
}

// compactingHarnessWith is a compacting harness with its own script.
func compactingHarnessWith(t *testing.T, script string) *harness {
	return newHarness(t, hopts{script: script, opts: func(o *server.Options) { o.ContextWindow = 40 }})
}

func compactions(us []acp.SessionUpdate) []*acp.CompactionUpdate {
	return ofType[*acp.CompactionUpdate](us)
}

func TestACompactionIsShownWhereItHappenedAndReplayedOnLoad(t *testing.T) {
	h := compactingHarness(t, compactionCaps)
	sid := h.newSession()
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	if c := compactions(h.ed.of(sid)); len(c) != 0 {
		t.Fatalf("a compaction in the first turn, with nothing to compact: %+v", c)
	}
	h.ed.reset()
	h.mustPrompt(sid, "hello again", acp.StopReasonEndTurn)
	us := h.ed.of(sid)
	c := compactions(us)
	if len(c) != 2 {
		t.Fatalf("%d compaction updates in the second turn, want in_progress then completed", len(c))
	}
	if c[0].Status != acp.CompactionInProgress || c[1].Status != acp.CompactionCompleted || c[0].CompactionID == "" || c[1].CompactionID != c[0].CompactionID {
		t.Fatalf("compaction updates %+v, %+v", c[0], c[1])
	}
	if sum, ok := c[1].Summary.Get(); !ok || len(sum) != 1 || sum[0].(*acp.TextContent).Text != "SUMMARY: the user said hello twice." {
		t.Fatalf("completed summary %+v", c[1].Summary)
	}
	// It comes before the turn's answer: the summary replaced the older
	// turns before the model call that answered.
	first := -1
	for i, u := range us {
		if _, ok := u.(*acp.AgentMessageChunk); ok && first < 0 {
			first = i
		}
	}
	if _, ok := us[0].(*acp.CompactionUpdate); !ok || first < 0 {
		t.Fatalf("the turn does not start with the compaction: %T first", us[0])
	}

	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h.ed.reset()
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := h.ed.of(sid)
	rc := compactions(replay)
	if len(rc) != 1 || rc[0].Status != acp.CompactionCompleted || rc[0].CompactionID != c[0].CompactionID || !rc[0].Summary.IsSet() {
		t.Fatalf("replayed compactions %+v, want the completed one only", rc)
	}
	// Replayed between the first exchange and the second answer.
	text := ""
	for _, u := range replay {
		switch u := u.(type) {
		case *acp.AgentMessageChunk:
			text += u.Content.(*acp.TextContent).Text
		case *acp.CompactionUpdate:
			text += "[compacted]"
		}
	}
	if !strings.Contains(text, "You said: hello and") || !strings.Contains(text, "[compacted]You said: hello again") {
		t.Fatalf("replay order %q", text)
	}
}

func TestAClientWithoutTheCapabilitySeesNoCompaction(t *testing.T) {
	h := compactingHarness(t, acp.ClientCapabilities{})
	sid := h.newSession()
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	h.mustPrompt(sid, "hello again", acp.StopReasonEndTurn)
	if c := compactions(h.ed.of(sid)); len(c) != 0 {
		t.Fatalf("compaction updates sent to a client without session.compaction: %+v", c)
	}
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h.ed.reset()
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if c := compactions(h.ed.of(sid)); len(c) != 0 {
		t.Fatalf("a replay to a client without session.compaction has compactions: %+v", c)
	}

	// The compaction was recorded all the same: a client that can show
	// it gets it when it loads the session.
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h.connect(compactionCaps)
	h.ed.reset()
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if c := compactions(h.ed.of(sid)); len(c) != 1 || c[0].Status != acp.CompactionCompleted {
		t.Fatalf("a capable client's replay has compactions %+v, want the completed one", c)
	}
}

func TestCompactOnRequestIsShownLikeTheAutomaticOne(t *testing.T) {
	h := newHarness(t, hopts{script: compactScript, caps: compactionCaps})
	sid := h.newSession()
	h.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	h.ed.reset()
	h.mustPrompt(sid, "/compact", acp.StopReasonEndTurn)
	c := compactions(h.ed.of(sid))
	if len(c) != 2 || c[0].Status != acp.CompactionInProgress || c[1].Status != acp.CompactionCompleted || c[1].CompactionID != c[0].CompactionID {
		t.Fatalf("/compact sent compaction updates %+v, want in_progress then completed", c)
	}
}
