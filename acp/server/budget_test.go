package server_test

import (
	"encoding/json"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
)

// spendScript lists the directory at every call, 30 tokens a call: only a
// budget ends its turns.
const spendScript = `{"rules": [
  {"user": "^spend", "text": "working", "toolCalls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": {"input": 25, "output": 5}}
]}`

// perTurn sets the server's --max-tokens-per-turn.
func perTurn(n int) func(*server.Options) {
	return func(o *server.Options) { o.MaxTokensPerTurn = n }
}

// turnTotals are the turn usages the session's usage_updates carried.
func turnTotals(t *testing.T, us []acp.SessionUpdate) []uint64 {
	t.Helper()
	var out []uint64
	for _, u := range us {
		uu, ok := u.(*acp.UsageUpdate)
		if !ok || uu.Meta["dshd.dev/turnUsage"] == nil {
			continue
		}
		b, _ := json.Marshal(uu.Meta["dshd.dev/turnUsage"])
		var turn acp.Usage
		if err := json.Unmarshal(b, &turn); err != nil {
			t.Fatal(err)
		}
		out = append(out, turn.TotalTokens)
	}
	return out
}

func TestABudgetFromTheParentBoundsTheSessionOverAllItsTurns(t *testing.T) {
	h := newHarness(t, hopts{script: spendScript, mode: "yolo"})
	// What a parent dshd sends for a child with 100 tokens left.
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{},
		Meta: acp.Meta{"dshd.dev/depth": 1, "dshd.dev/maxDepth": 3, "dshd.dev/maxTokens": 100}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	h.mustPrompt(sid, "spend", acp.StopReasonMaxTokens)
	// 30, 60, 90, 120: the fifth call is refused.
	if got := turnTotals(t, h.ed.of(sid)); len(got) != 4 || got[3] != 120 {
		t.Fatalf("turn totals %v, want four calls up to 120", got)
	}
	h.ed.reset()
	// The budget is the session's, not a turn's: nothing is left for the next.
	h.mustPrompt(sid, "spend again", acp.StopReasonMaxTokens)
	if got := turnTotals(t, h.ed.of(sid)); len(got) != 0 {
		t.Fatalf("the spent session still called the model: %v", got)
	}
	// Kept with the session, the budget binds it once resumed (counted
	// afresh: what was spent before is the parent's to remember).
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
		t.Fatal(err)
	}
	h.ed.reset()
	h.mustPrompt(sid, "spend", acp.StopReasonMaxTokens)
	if got := turnTotals(t, h.ed.of(sid)); len(got) != 4 {
		t.Fatalf("resumed, turn totals %v, want four calls", got)
	}
	// A fork of it is bound by the same budget: forking is no way out of
	// what the parent gave.
	fork, err := h.client.ForkSession(h.ctx, &acp.ForkSessionRequest{SessionID: sid, Cwd: h.cwd})
	if err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(fork.SessionID, "spend", acp.StopReasonMaxTokens)
	if got := turnTotals(t, h.ed.of(fork.SessionID)); len(got) != 4 {
		t.Fatalf("the fork's turn totals %v, want four calls", got)
	}
}

func TestAChildKeepsItsOwnLowerTurnLimitWhenItsParentGivesMore(t *testing.T) {
	h := newHarness(t, hopts{script: spendScript, mode: "yolo", opts: perTurn(50)})
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{},
		Meta: acp.Meta{"dshd.dev/depth": 1, "dshd.dev/maxDepth": 3, "dshd.dev/maxTokens": 1000}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	for i := range 2 {
		h.ed.reset()
		h.mustPrompt(sid, "spend", acp.StopReasonMaxTokens)
		if got := turnTotals(t, h.ed.of(sid)); len(got) != 2 || got[1] != 60 {
			t.Fatalf("turn %d: totals %v, want two calls, stopped by this daemon's 50 per turn", i, got)
		}
	}
}

func TestWithoutABudgetTheSessionIsUnboundedButItsTurnLimitHolds(t *testing.T) {
	h := newHarness(t, hopts{script: spendScript, mode: "yolo", opts: perTurn(100)})
	sid := h.newSession()
	h.mustPrompt(sid, "spend", acp.StopReasonMaxTokens)
	if got := turnTotals(t, h.ed.of(sid)); len(got) != 4 || got[3] != 120 {
		t.Fatalf("turn totals %v, want four calls up to 120", got)
	}
}
