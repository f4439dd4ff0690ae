// End-to-end test of a command run in the editor's terminal, replayed
// after a restart (issue 11, item 8): the terminal belongs to the old
// connection, so the journal keeps the command's output and the replay
// shows it as text.

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

const terminalScript = `{"rules": [
  {"user": "run", "step": 0, "toolCalls": [{"name": "run_command", "arguments": {"command": "echo hi"}}]},
  {"user": "run", "step": 1, "text": "ran: {{tool}}"}
]}`

// editorTerminal answers terminal/* as an editor whose command printed
// out and exited 0.
func editorTerminal(out string) requestHandler {
	exit := map[string]any{"exitCode": 0}
	return func(m *msg) (any, *rpcErr) {
		switch m.Method {
		case "terminal/create":
			return map[string]any{"terminalId": "term-old-connection"}, nil
		case "terminal/output":
			return map[string]any{"output": out, "truncated": false, "exitStatus": exit}, nil
		case "terminal/wait_for_exit":
			return exit, nil
		case "terminal/release", "terminal/kill":
			return map[string]any{}, nil
		}
		return nil, notFound
	}
}

// contentTypes lists the tool-call content items of ns as "type:text".
func contentItems(ns []note) []string {
	var out []string
	for _, n := range ns {
		var u struct {
			Content []struct {
				Type       string `json:"type"`
				TerminalID string `json:"terminalId"`
				Content    struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		}
		_ = json.Unmarshal(n.Update, &u)
		for _, c := range u.Content {
			out = append(out, c.Type+":"+c.TerminalID+c.Content.Text)
		}
	}
	return out
}

func TestAReplayedCommandShowsItsOutputNotADeadTerminal(t *testing.T) {
	ctx := testkit.Context(t)
	script, state, cwd := writeScript(t, terminalScript), t.TempDir(), t.TempDir()
	p, c := stdioDaemon(t, script, state, "--mode", "yolo")
	c.handleRequests(editorTerminal("hello from the editor terminal\n"))
	c.initialize(ctx, map[string]any{"terminal": true})
	sid := c.newSession(ctx, cwd)
	c.endTurn(ctx, sid, "run it")
	live := strings.Join(contentItems(c.updates(sid)), "\n")
	if !strings.Contains(live, "terminal:term-old-connection") {
		t.Fatalf("the live tool call does not embed the editor's terminal:\n%s", live)
	}
	p.hangUp(ctx)

	_, _, replay := loadSession(ctx, t, script, state, sid, cwd)
	items := strings.Join(contentItems(replay), "\n")
	if strings.Contains(items, "term-old-connection") {
		t.Fatalf("the replay points at the old connection's terminal:\n%s", items)
	}
	if !strings.Contains(items, "hello from the editor terminal") || !strings.Contains(items, "exit code 0") {
		t.Fatalf("the replay lost the command's output:\n%s", dump(replay))
	}
}
