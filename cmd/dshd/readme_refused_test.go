// End-to-end test of README's "Permissions in CI": dshd prompt has nobody
// to ask, so a rejection it answers is one nobody gave. The model must be
// told the action was refused without asking anyone (and to finish without
// it), not that "the user rejected" it and to "ask the user".

package main

import (
	"strings"
	"testing"
)

func TestAPromptsRejectionTellsTheModelNobodyWasAsked(t *testing.T) {
	script := writeScript(t, `{"rules": [
  {"step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
  {"step": 1, "text": "tool said: {{tool}}"}]}`)
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "write it")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "refused without asking anyone") || strings.Contains(stdout, "ask the user") {
		t.Fatalf("the model was told %q; want a refusal nobody gave", stdout)
	}
	if !strings.Contains(stderr, "? Create a.txt: rejected (no one to ask; --yes allows it)") {
		t.Fatalf("stderr lacks the question and its answer:\n%s", stderr)
	}
}
