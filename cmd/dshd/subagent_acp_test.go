// End-to-end test of the default acp child: a child dshd started by the
// acp provider gets the model's API key although the provider keeps
// credential-shaped variables out of a child's environment.

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestPromptTheDefaultACPChildStillGetsTheModelKey(t *testing.T) {
	srv := fakeModel(t)
	srv.RequireAPIKey("k-123")
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		for _, m := range c.Messages {
			if m.Role == "tool" {
				return openaitest.Text("parent done")
			}
		}
		if strings.Contains(c.LastUserText(), "child task") {
			return openaitest.Text("child answer")
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "subagent_acp", Arguments: `{"description":"d","prompt":"child task"}`}}}
	})
	env := []string{"E2E_MODEL_KEY=k-123"}
	code, stdout, stderr := runDshd(t, env, promptArgs(t, srv, "--api-key-env", "E2E_MODEL_KEY", "--subagent", "subagent_acp=acp", "delegate this")...)
	if code != 0 || stdout != "parent done\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	var child, result string
	for _, r := range srv.Requests() {
		if r.Chat == nil {
			continue
		}
		if strings.Contains(r.Chat.LastUserText(), "child task") {
			child = r.Header.Get("Authorization")
		}
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" {
				var s string
				json.Unmarshal(m.Content, &s)
				result = s
			}
		}
	}
	if child != "Bearer k-123" {
		t.Fatalf("the child dshd called the model with Authorization %q", child)
	}
	if !strings.Contains(result, "child answer") {
		t.Fatalf("the parent's tool result was %q; stderr:\n%s", result, stderr)
	}
}
