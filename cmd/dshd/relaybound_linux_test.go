// End-to-end test of the disk bounds on what a child agent sends: a real
// dshd delegates to an acp agent (a shell script on real pipes) that
// floods updates, to a client that sees subagent sessions, so each of
// them is relayed and recorded in the parent session's journal.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// TestAChildsFloodOfUpdatesStopsAtTheDiskBounds: a child sending 4000
// updates of 1000 bytes (4 MB) to a parent whose journal or state is
// bounded to 64 KiB is cancelled once the bound is reached, during the
// turn that started it or after (a background child); nothing more of it
// is recorded or relayed, the user is told naming the setting (and a
// turn still running ends with an error naming it), and that is logged
// once. Before, every update was recorded: the turn ended end_turn, the
// child ran to its end and the journal grew past 4 MB.
func TestAChildsFloodOfUpdatesStopsAtTheDiskBounds(t *testing.T) {
	script := testdataScript(t, "floodagent.sh")
	const (
		limit = 64 << 10
		count = 4000
		size  = 1000
		// childOutput keeps the subagent call's result small beside the
		// bound, which a turn may pass by its own records.
		childOutput = 4096
		logLine     = "subagent's updates not recorded or relayed while a disk bound is reached; the subagent is cancelled"
	)
	for _, tc := range []struct {
		setting    string
		background bool
	}{
		{"--max-journal-bytes", false},
		{"--max-state-bytes", false},
		{"--max-journal-bytes", true},
	} {
		name := tc.setting
		if tc.background {
			name += " after the turn"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testkit.Context(t)
			dir := t.TempDir()
			cancelled := filepath.Join(dir, "cancelled")
			args := fmt.Sprintf("%s %d %d %s", script, count, size, cancelled)
			binding := "flood=acp,command=/bin/sh"
			var fifo *os.File
			if tc.background {
				// The background child floods only once the turn that
				// started it answered: a line in this FIFO says so.
				path := filepath.Join(dir, "go")
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
				// Read and write: the open does not wait for the child,
				// and the line stays in the pipe until it reads it.
				var err error
				if fifo, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { fifo.Close() })
				args += " " + path
				binding += ",background"
			}
			srv := fakeModel(t)
			srv.Handle(func(r *openaitest.Request) openaitest.Reply {
				if hasToolResult(r.Chat) {
					return openaitest.Text("parent done")
				}
				return subagentCall("call_1", "flood", "flood me")
			})
			state := t.TempDir()
			p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state,
				"--mode", "yolo", "--sandbox", "off", "--subagent", binding+",args="+args,
				"--max-child-output-bytes", fmt.Sprint(childOutput), tc.setting, fmt.Sprint(limit))
			w := stdioWire(p)
			w.initialize(ctx, map[string]any{"subagents": map[string]any{}})
			sid := w.newSession(ctx, t.TempDir())

			m := testkit.Await(t, w.promptAsync(sid, "delegate"), "the prompt's answer")
			if tc.background {
				if m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
					t.Fatalf("the prompt that started a background child answered %s %v%s", m.Result, m.Error, w.stderrTail())
				}
				if _, err := fifo.WriteString("go\n"); err != nil {
					t.Fatal(err)
				}
				w.waitUpdates(ctx, sid, func(ns []note) bool { return childIdle(ns) != "" })
			} else if m.Error == nil || !containsAll(m.Error.Message, "The turn was stopped", tc.setting) {
				t.Fatalf("the prompt whose child flooded answered %s %v, want an error naming %s%s", m.Result, m.Error, tc.setting, w.stderrTail())
			}
			if _, err := os.Stat(cancelled); err != nil {
				t.Fatalf("the child was not cancelled: %v; its end: %s", err, childIdle(w.updates(sid)))
			}
			// The bound is checked before each relayed update: the one
			// that reached it, and what the turn or task records as it
			// ends (the subagent's result, bounded by
			// --max-child-output-bytes), land past it.
			if got := journalSize(t, state, sid); got > limit+2*childOutput+4*size {
				t.Fatalf("the journal is %d bytes, bounded to %d", got, limit)
			}
			relayed := 0
			for _, n := range w.updates("") {
				if n.SessionID != sid && n.Kind == "agent_message_chunk" {
					relayed++
				}
			}
			if relayed*size > limit {
				t.Fatalf("%d of the child's updates were relayed, past the bound", relayed)
			}
			if told := text(w.updates(sid)); !containsAll(told, "Subagent cancelled", tc.setting) {
				t.Fatalf("the user was told %q, want the subagent cancelled naming %s", told, tc.setting)
			}
			if n := strings.Count(p.stderr.String(), logLine); n != 1 || !strings.Contains(p.stderr.String(), "setting="+tc.setting) {
				t.Fatalf("the stop was logged %d times, want once naming %s:\n%s", n, tc.setting, p.stderr)
			}
		})
	}
}

// childIdle returns the last idle state of a subagent session among the
// parent's updates ns (its JSON), or "".
func childIdle(ns []note) string {
	var last string
	for _, n := range ns {
		var u struct {
			State *struct {
				State string `json:"state"`
			} `json:"state"`
		}
		if n.Kind == "subagent_update" && json.Unmarshal(n.Update, &u) == nil && u.State != nil && u.State.State == "idle" {
			last = string(n.Update)
		}
	}
	return last
}
