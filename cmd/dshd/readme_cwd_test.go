// End-to-end tests of dshd prompt's --cwd: a directory that does not
// exist is a mistake in the command line (exit 2, naming --cwd), not a
// session in nowhere, and a relative one is taken from the current
// directory.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAPromptCwdThatIsNoDirectoryStopsDshdAtStart(t *testing.T) {
	dir := t.TempDir()
	good := testkit.Write(t, dir, "good", "a file\n")
	missing := filepath.Join(dir, "missing")
	runMistakes(t, []mistake{
		{name: "a prompt --cwd that does not exist", args: []string{"prompt", "--cwd", missing, "hi"},
			want: []string{`--cwd "` + missing + `"`, "no such directory"}},
		{name: "a prompt --cwd that is a file", args: []string{"prompt", "--cwd", good, "hi"},
			want: []string{`--cwd "` + good + `"`, "not a directory"}},
	})
}

func TestARelativePromptCwdIsTakenFromTheCurrentDirectory(t *testing.T) {
	parent := t.TempDir()
	ws, here := filepath.Join(parent, "ws"), filepath.Join(parent, "here")
	for _, d := range []string{ws, here} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Write(t, ws, "marker.txt", "in ws\n")
	exe := testkit.Executable(t)
	cmd := exec.CommandContext(testkit.Context(t), exe, "prompt", "--model", "scripted:"+writeScript(t, `{"rules": [
  {"step": 0, "toolCalls": [{"name": "read_file", "arguments": {"path": "marker.txt"}}]},
  {"step": 1, "text": "read: {{tool}}"}]}`), "--state-dir", t.TempDir(), "--cwd", "../ws", "read the marker")
	cmd.Env, cmd.Dir = baseEnv(t), here
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dshd prompt --cwd ../ws: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "in ws") {
		t.Fatalf("the session did not work in ../ws: stdout %q; stderr:\n%s", out, stderr.String())
	}
}
