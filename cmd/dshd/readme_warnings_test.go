// End-to-end test of how dshd prompt reports a workspace's broken agent
// definition or command file: README says the mistake is logged and shown
// to the user as a message at session/new; in dshd prompt both land on
// stderr, so each is printed once (the "⚠ …" line), while a mistake in the
// user's own definitions, shown nowhere else, is still logged.

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestPromptPrintsAWorkspaceFilesMistakeOnce(t *testing.T) {
	ws, config := t.TempDir(), t.TempDir()
	testkit.Write(t, ws, ".dshd/commands/tasks.md", "a command named like a built-in\n")
	testkit.Write(t, ws, ".dshd/agents/bad.md", "---\ndescription: x\nmaxTurns: 0\n---\n")
	testkit.Write(t, config, "dshd/agents/mine.md", "---\ndescription: x\nmaxDepth: -2\n---\n")
	code, stdout, stderr := runDshd(t, []string{"XDG_CONFIG_HOME=" + config}, "prompt", "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", ws, "hi")
	if code != 0 || stdout != "You said: hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	for _, f := range []string{filepath.Join(ws, ".dshd/commands/tasks.md"), filepath.Join(ws, ".dshd/agents/bad.md"), filepath.Join(config, "dshd/agents/mine.md")} {
		if n := strings.Count(stderr, f); n != 1 {
			t.Errorf("stderr names %s %d times, want once:\n%s", f, n, stderr)
		}
	}
	if !strings.Contains(stderr, "⚠ "+filepath.Join(ws, ".dshd/agents/bad.md")) {
		t.Errorf("the workspace's mistake is not shown as a warning:\n%s", stderr)
	}
}
