// End-to-end test of the sandbox of an acp agent defined in a file: a
// workspace definition's command (which came with the repository) runs
// confined, the same definition in the user's config dir as before.

package main

import (
	"path/filepath"
	"testing"
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
	exe, script := scriptedChild(t)
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
			delegateToWrapper(t, "wrapper", []string{"XDG_CONFIG_HOME=" + config}, ws, outside, tc.outside)
		})
	}
}
