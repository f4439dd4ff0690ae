// End-to-end tests of the /agents command against what README says of
// delegation: with --max-depth 0 the model is offered no subagent tool at
// all, so /agents lists none; and an acp agent's children bring their own
// tools (the provider cannot filter them), not the parent's.

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentsListsNoAgentWhenMaxDepthIsZero(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "--max-depth", "0", "/agents")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if stdout != "This session has no agents to delegate to.\n" {
		t.Fatalf("/agents with --max-depth 0 = %q, want no agents: the model is offered none", stdout)
	}
}

func TestAgentsSaysAnACPAgentBringsItsOwnTools(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", t.TempDir(),
		"--subagent", "remote=acp,address=unix:"+sock, "--subagent", "helper=spawn", "/agents")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"- remote (provider acp)\n  tools: the agent's own", "- helper (provider spawn)\n  tools: the parent's"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("/agents lacks %q:\n%s", want, stdout)
		}
	}
}
