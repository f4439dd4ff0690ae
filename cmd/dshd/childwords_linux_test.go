// End-to-end tests of what a real dshd says about an acp child that dies
// in its sandbox, and of the state dir a child dshd's relative settings
// name, which is made writable for it where the child runs (delegateOnce
// is sandbox_helpers_linux_test.go's).

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAChildThatDiesInItsSandboxSaysWhereItRanWhatWasRefusedAndWhatWouldAllowIt(t *testing.T) {
	needSandbox(t)
	// Short, so that no part of it looks like a credential the
	// diagnostic would hide.
	state := filepath.Join(testkit.ShortDir(t, "cw"), "state")
	// A third-party agent that makes its state dir outside the
	// workspace, and whose binding does not make it writable.
	binding := "subagent_acp=acp,command=/bin/sh,args=-c 'mkdir \"$STATE\"',env=STATE=" + state + ",sandbox=workspace-write"
	result, stderr := delegateOnce(t, "subagent_acp", nil, t.TempDir(), "--subagent", binding)
	want := []string{"could not be started", "exited with status 1 in its workspace-write sandbox", "Permission denied",
		"The sandbox refused `" + state + "`", "writable= on its binding", "sandbox=off"}
	for _, w := range want {
		if !strings.Contains(result, w) {
			t.Errorf("the tool result does not say %q:\n%s", w, result)
		}
	}
	// The log record says it too, with the newlines of the stderr tail
	// escaped.
	var record string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "the agent could not be started") {
			record = l
		}
	}
	for _, w := range want {
		if !strings.Contains(record, w) {
			t.Errorf("the log record does not say %q: %s\nstderr:\n%s", w, record, stderr)
		}
	}
	// The ✗ line has room for the first line: that it ran in the sandbox.
	var failed string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "✗ ") {
			failed = l
		}
	}
	if !strings.Contains(failed, "in its workspace-write sandbox") {
		t.Errorf("the ✗ line does not say the agent ran in the sandbox: %q\nstderr:\n%s", failed, stderr)
	}
}

func TestAChildDshdsRelativeConfigFileIsTheOneInTheDirItRunsIn(t *testing.T) {
	needSandbox(t)
	exe, script := scriptedChild(t)
	// The child's config file is in the session's workspace, where the
	// child runs, and names its state dir, outside; the parent runs in
	// this package's dir, where there is no child.json.
	ws, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	testkit.Write(t, ws, "child.json", `{"stateDir": "`+state+`"}`)
	binding := "subagent_acp=acp,command=" + exe + ",args=serve --mode yolo --model scripted:" + script + " --config child.json"
	result, stderr := delegateOnce(t, "subagent_acp", nil, ws, "--subagent", binding)
	if !strings.Contains(result, "child says:") {
		t.Fatalf("the child's turn did not complete: %q; stderr:\n%s", result, stderr)
	}
	// Its journal is in the state dir its config file names.
	if entries, err := os.ReadDir(filepath.Join(state, "sessions")); err != nil || len(entries) == 0 {
		t.Errorf("the child wrote no journal in %s: %v", state, err)
	}
}
