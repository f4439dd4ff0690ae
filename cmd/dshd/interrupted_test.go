// End-to-end test of a tool call a crash interrupted (issue 11, item
// 10): after a restart, the replay ends it as failed, once, instead of
// leaving it in progress for ever.

package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

const slowToolScript = `{"rules": [
  {"user": "slow", "step": 0, "toolCalls": [{"name": "run_command", "arguments": {"command": "sleep 20"}}]},
  {"user": "slow", "step": 1, "text": "done: {{tool}}"},
  {"text": "You said: {{user}}"}
]}`

// toolStates returns each tool call's statuses, in order.
func toolStates(ns []note) map[string][]string {
	out := map[string][]string{}
	for _, n := range ns {
		if n.Kind != "tool_call" && n.Kind != "tool_call_update" {
			continue
		}
		var u struct {
			ID     string `json:"toolCallId"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(n.Update, &u)
		if u.Status != "" {
			out[u.ID] = append(out[u.ID], u.Status)
		}
	}
	return out
}

func TestAToolCallACrashInterruptedEndsFailedInTheReplay(t *testing.T) {
	ctx := testkit.Context(t)
	script, state, cwd := writeScript(t, slowToolScript), t.TempDir(), t.TempDir()
	p, c := stdioDaemon(t, script, state, "--mode", "yolo")
	sid := c.openSession(ctx, cwd)
	c.promptAsync(sid, "slow command")
	var id string
	c.waitUpdates(ctx, sid, func(ns []note) bool {
		for tc, st := range toolStates(ns) {
			if st[len(st)-1] == "in_progress" {
				id = tc
				return true
			}
		}
		return false
	})
	p.signal(syscall.SIGKILL)
	p.wait(ctx)

	for load := 1; load <= 2; load++ {
		p2, c2, replay := loadSession(ctx, t, script, state, sid, cwd)
		states := toolStates(replay)[id]
		if len(states) == 0 || states[len(states)-1] != "failed" {
			t.Fatalf("load %d: the interrupted call %s ends %v in the replay:\n%s", load, id, states, dump(replay))
		}
		if n := strings.Count(strings.Join(states, " "), "failed"); n != 1 {
			t.Fatalf("load %d: the call ends failed %d times: %v", load, n, states)
		}
		if !strings.Contains(dump(replay), "daemon stopped before this call finished") {
			t.Fatalf("load %d: the failure does not say why:\n%s", load, dump(replay))
		}
		if load == 2 {
			c2.endTurn(ctx, sid, "after the crash")
		}
		p2.hangUp(ctx)
	}
}
