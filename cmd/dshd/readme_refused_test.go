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
	stdout, stderr := promptToWriteAFile(t, "tool said: {{tool}}")
	if !strings.Contains(stdout, "refused without asking anyone") || strings.Contains(stdout, "ask the user") {
		t.Fatalf("the model was told %q; want a refusal nobody gave", stdout)
	}
	if !strings.Contains(stderr, "? Create a.txt: rejected (no one to ask; --yes allows it)") {
		t.Fatalf("stderr lacks the question and its answer:\n%s", stderr)
	}
}
