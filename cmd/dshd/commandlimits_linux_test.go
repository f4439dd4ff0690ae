// End-to-end tests of the bounds of run_command: the settings that say
// how much output the model gets and how long a command runs (audit
// finding 7). Linux only, as the command tests whose helpers it shares.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestRunCommandsOutputAndTimeoutsAreSettings(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("done")
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "call_long", Name: "run_command", Arguments: `{"command":"head -c 5000 /dev/zero | tr '\\0' x; echo; echo TAIL"}`},
			{ID: "call_default", Name: "run_command", Arguments: `{"command":"sleep 5"}`},
			{ID: "call_max", Name: "run_command", Arguments: `{"command":"sleep 5","timeout":600}`},
		}}
	})
	code, _, stderr := runDshd(t, []string{"DSHD_COMMAND_TIMEOUT=1s"}, promptArgs(t, srv, "--mode", "yolo", "--sandbox", "off",
		"--command-output-bytes", "2048", "--command-max-timeout", "2s", "run them")...)
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
	if r := results[2]; !strings.Contains(r, "timed out after 2s") {
		t.Errorf("a call asking 600 s at --command-max-timeout 2s: %q", r)
	}
	desc := toolDescription(srv.ChatRequests()[0], "run_command")
	if !strings.Contains(desc, "(default 1, at most 2)") || !strings.Contains(desc, "last 2048 bytes") {
		t.Errorf("run_command's description does not tell the model its bounds:\n%s", desc)
	}
}
