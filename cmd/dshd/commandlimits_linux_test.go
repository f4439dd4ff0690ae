// End-to-end tests of the bounds of run_command: the output the model
// gets, asked of an editor's terminal and kept whatever it sends
// (audit finding 5: one 40 MB terminal/output answer made an 84 MB
// journal and 10.5M input tokens), and the settings that say how much and
// how long (finding 7). Linux only, as the command tests whose helpers it
// shares.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// oversizedTerminal answers terminal/* as an editor that ignores
// outputByteLimit: every terminal/output answer is all of out. The
// command ends only once the runner has polled its output, so the
// polled answer is as large as the final one; released is closed when
// the terminal is.
func oversizedTerminal(out string) (h requestHandler, released <-chan struct{}) {
	exit := map[string]any{"exitCode": 0}
	answer, _ := json.Marshal(map[string]any{"output": out, "truncated": false, "exitStatus": exit})
	polled, done := make(chan struct{}), make(chan struct{})
	var pollOnce, releaseOnce sync.Once
	return func(m *msg) (any, *rpcErr) {
		switch m.Method {
		case "terminal/create":
			return map[string]any{"terminalId": "term-big"}, nil
		case "terminal/output":
			pollOnce.Do(func() { close(polled) })
			return json.RawMessage(answer), nil
		case "terminal/wait_for_exit":
			<-polled
			return exit, nil
		case "terminal/release":
			releaseOnce.Do(func() { close(done) })
			return map[string]any{}, nil
		case "terminal/kill":
			return map[string]any{}, nil
		}
		return nil, notFound
	}, done
}

// lastIsToolResult reports whether the last message of c is a tool
// result: the model's step after its call, in this turn.
func lastIsToolResult(c *openaitest.ChatRequest) bool {
	return len(c.Messages) > 0 && c.Messages[len(c.Messages)-1].Role == "tool"
}

func TestAnEditorsTerminalThatIgnoresTheOutputLimitCostsNoMoreThanTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name, args, setting string
		limit               int // the setting's default
		// cut: the model is told the output was cut, as for a local
		// command (a background command's first output is the task's).
		cut bool
	}{
		{"a command", `{"command":"make check"}`, "--command-output-bytes", 30000, true},
		{"a background command", `{"command":"make serve","background":true}`, "--task-output-limit", 262144, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			srv := fakeModel(t)
			srv.Handle(func(r *openaitest.Request) openaitest.Reply {
				if lastIsToolResult(r.Chat) {
					return openaitest.Text("ran")
				}
				return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "run_command", Arguments: tc.args}}}
			})
			state, cwd := t.TempDir(), t.TempDir()
			p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state, "--mode", "yolo")
			c := stdioWire(p)
			// 4 MiB, 16 to 140 times the limit (the audit's 40 MB takes
			// half a minute under the race detector).
			h, released := oversizedTerminal("HEAD" + strings.Repeat("x", 4<<20) + "\nTAIL\n")
			c.handleRequests(h)
			c.initialize(ctx, map[string]any{"terminal": true})
			sid := c.newSession(ctx, cwd)
			c.endTurn(ctx, sid, "run it")
			testkit.Await(t, released, "the terminal's release")

			for _, m := range c.daemonRequests("terminal/create") {
				var asked struct {
					OutputByteLimit int `json:"outputByteLimit"`
				}
				if err := json.Unmarshal(m.Params, &asked); err != nil || asked.OutputByteLimit != tc.limit {
					t.Errorf("terminal/create asked for outputByteLimit %d (%v), want %d", asked.OutputByteLimit, err, tc.limit)
				}
			}
			results := toolResults(srv)
			if len(results) != 1 {
				t.Fatalf("the model got %d tool results, want 1", len(results))
			}
			r := results[0]
			// A line of exit status or the task's id goes with the output.
			if len(r) > tc.limit+300 || strings.Contains(r, "HEAD") {
				t.Errorf("the model got %d bytes of the command's output, want at most its last %d: %.200q…%q", len(r), tc.limit, r, r[max(0, len(r)-100):])
			}
			if tc.cut && (!strings.HasPrefix(r, "[output truncated: showing the last ") || !strings.Contains(r, "TAIL")) {
				t.Errorf("the model is not told the output was cut: %.200q…%q", r, r[max(0, len(r)-100):])
			}
			fi, err := os.Stat(filepath.Join(state, "sessions", sid+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			// The output is recorded a few times (the tool call's content
			// and result, the model's history, the task's output).
			if fi.Size() > 8*int64(tc.limit) {
				t.Errorf("the journal holds %d bytes after a command whose output was to be cut at %d", fi.Size(), tc.limit)
			}
			if n := strings.Count(p.stderr.String(), "more output than the outputByteLimit"); n != 1 {
				t.Errorf("the editor's oversized answers were logged %d times, want once a session:\n%s", n, p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "setting="+tc.setting) {
				t.Errorf("the log does not name %s:\n%s", tc.setting, p.stderr)
			}
		})
	}
}

func TestRunCommandsOutputAndTimeoutsAreSettings(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("done")
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "call_long", Name: "run_command", Arguments: `{"command":"head -c 5000 /dev/zero | tr '\\0' x; echo; echo TAIL","timeout":4}`},
			{ID: "call_default", Name: "run_command", Arguments: `{"command":"sleep 30"}`},
			{ID: "call_max", Name: "run_command", Arguments: `{"command":"sleep 30","timeout":600}`},
		}}
	})
	code, _, stderr := runDshd(t, []string{"DSHD_COMMAND_TIMEOUT=1s"}, promptArgs(t, srv, "--mode", "yolo", "--sandbox", "off",
		"--command-output-bytes", "2048", "--command-max-timeout", "4s", "run them")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	results := toolResults(srv)
	if len(results) != 3 {
		t.Fatalf("the model got %d tool results, want 3: %q", len(results), results)
	}
	if r := results[0]; !strings.HasPrefix(r, "[output truncated: showing the last 2048 bytes]") || len(r) > 2048+100 || !strings.Contains(r, "TAIL") {
		t.Errorf("5000 bytes of output at --command-output-bytes 2048 gave the model %d bytes: %.100q", len(r), r)
	}
	if r := results[1]; !strings.Contains(r, "timed out after 1s") {
		t.Errorf("a call without a timeout at DSHD_COMMAND_TIMEOUT=1s: %q", r)
	}
	if r := results[2]; !strings.Contains(r, "timed out after 4s") {
		t.Errorf("a call asking 600 s at --command-max-timeout 4s: %q", r)
	}
	desc := toolDescription(srv.ChatRequests()[0], "run_command")
	if !strings.Contains(desc, "(default 1, at most 4)") || !strings.Contains(desc, "last 2048 bytes") {
		t.Errorf("run_command's description does not tell the model its bounds:\n%s", desc)
	}
}
