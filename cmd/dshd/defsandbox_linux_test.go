// End-to-end test of the sandbox of an acp agent defined in a file: a
// workspace definition's command (which came with the repository) runs
// confined, the same definition in the user's config dir as before.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// wrapperDefinition is an acp agent definition whose command writes a
// file in outside and one in its cwd, then becomes a child dshd on
// script with its state in state.
func wrapperDefinition(exe, script, outside, state string) string {
	return "---\ndescription: A third-party agent.\nprovider: acp\ncommand: /bin/sh\nargs:\n  - -c\n  - 'echo out > " + outside +
		"/outside.txt; echo in > inside.txt; exec " + exe + " serve --mode yolo --model scripted:" + script + " --state-dir " + state + "'\n---\n"
}

func TestAWorkspaceDefinitionsCommandRunsInTheSandboxAndTheUsersAsBefore(t *testing.T) {
	needSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := testkit.Write(t, t.TempDir(), "child.json", `{"rules": [{"text": "child says: {{user}}"}]}`)
	for _, tc := range []struct {
		name    string
		user    bool
		outside bool
	}{
		{"in the workspace: confined", false, false},
		{"in the user's config dir: unconfined, as before", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside, config := t.TempDir(), t.TempDir(), t.TempDir()
			// The child's state is in the workspace, which a confined
			// child may write.
			def := wrapperDefinition(exe, script, outside, filepath.Join(ws, ".state"))
			if tc.user {
				agentFile(t, config, "dshd/agents", "wrapper.md", def)
			} else {
				agentFile(t, ws, ".dshd/agents", "wrapper.md", def)
			}
			srv := fakeModel(t)
			srv.Handle(func(r *openaitest.Request) openaitest.Reply {
				if hasToolResult(r.Chat) {
					return openaitest.Text("parent done")
				}
				return subagentCall("call_1", "wrapper", "hello child")
			})
			code, stdout, stderr := runDshd(t, []string{"XDG_CONFIG_HOME=" + config}, "prompt", "--model-url", srv.URL(), "--model", "m",
				"--api-key-env", "", "--state-dir", t.TempDir(), "--cwd", ws, "--mode", "yolo", "delegate")
			if code != 0 || stdout != "parent done\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
			}
			if result := strings.Join(toolResults(srv), "\n"); !strings.Contains(result, "child says:") {
				t.Fatalf("the child's turn did not complete: %q; stderr:\n%s", result, stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
				t.Errorf("the agent could not write in the workspace: %v", err)
			}
			_, err := os.Stat(filepath.Join(outside, "outside.txt"))
			if got := err == nil; got != tc.outside {
				t.Errorf("outside.txt written = %v, want %v", got, tc.outside)
			}
		})
	}
}
