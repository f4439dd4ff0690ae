// End-to-end test of the context meter after a restart (issue 11, item
// 7): session/load and session/resume report the session's real usage,
// not zero.

package main

import (
	"encoding/json"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// usageScript answers with a known token usage.
const usageScript = `{"rules": [{"text": "Noted.", "usage": {"input": 4000, "output": 150}}]}`

// lastUsed returns the used value of the last usage_update among ns.
func lastUsed(t testing.TB, ns []note) (used uint64, n int) {
	t.Helper()
	for _, x := range ns {
		if x.Kind != "usage_update" {
			continue
		}
		var u struct {
			Used uint64 `json:"used"`
		}
		if err := json.Unmarshal(x.Update, &u); err != nil {
			t.Fatal(err)
		}
		used, n = u.Used, n+1
	}
	return used, n
}

func TestLoadAndResumeReportTheSessionsRealContextUsage(t *testing.T) {
	ctx := testkit.Context(t)
	script, state, cwd := writeScript(t, usageScript), t.TempDir(), t.TempDir()
	p, c := stdioDaemon(t, script, state)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "remember this")
	if used, _ := lastUsed(t, c.updates(sid)); used != 4150 {
		t.Fatalf("live usage_update used %d, want 4150", used)
	}
	p.hangUp(ctx)

	for _, method := range []string{"session/load", "session/resume"} {
		t.Run(method, func(t *testing.T) {
			_, c := stdioDaemon(t, script, state)
			c.initialize(ctx, nil)
			c.call(ctx, method, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
			// load replays the recorded usage_update, then both send the
			// current one after their answer.
			want := 1
			if method == "session/load" {
				want = 2
			}
			ups := c.waitUpdates(ctx, sid, func(ns []note) bool { _, n := lastUsed(t, ns); return n >= want })
			if used, _ := lastUsed(t, ups); used != 4150 {
				t.Fatalf("after %s the context meter reads %d, want 4150:\n%s", method, used, dump(ups))
			}
		})
	}
}
