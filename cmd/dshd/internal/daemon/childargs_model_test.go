package daemon

import (
	"slices"
	"testing"
)

// TestAChildDshdGetsTheParentsModelAnswerBound: a parent that sets
// --max-model-answer-bytes passes it to the default child dshd, as it
// passes the model timeouts it sets, and the child's settings read it
// back; a parent that leaves it unset leaves the child its default.
func TestAChildDshdGetsTheParentsModelAnswerBound(t *testing.T) {
	parent := settingsOf(t, []string{"--max-model-answer-bytes", "1048576"})
	args := childArgs(parent)
	if child := settingsOf(t, args[1:]); child.MaxModelAnswerBytes != 1048576 {
		t.Fatalf("the child of a parent bound to 1048576 bytes an answer has %d (arguments %q)", child.MaxModelAnswerBytes, args)
	}
	parent = settingsOf(t, nil)
	args = childArgs(parent)
	if slices.Contains(args, "--max-model-answer-bytes") {
		t.Fatalf("a parent that set no bound gives its child one: %q", args)
	}
	if child := settingsOf(t, args[1:]); child.MaxModelAnswerBytes != parent.MaxModelAnswerBytes {
		t.Fatalf("the child has %d, its parent %d", child.MaxModelAnswerBytes, parent.MaxModelAnswerBytes)
	}
}
