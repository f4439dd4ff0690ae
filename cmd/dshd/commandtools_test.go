// End-to-end test of a command file's allowed-tools: Claude Code's names
// map in every command directory, and a name that is no tool is shown as
// the file's mistake, the command running with the tools it names that
// exist.

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

func TestACommandsAllowedToolsMapClaudeNamesAndTellOfOnesThatNameNoTool(t *testing.T) {
	for _, tc := range []struct {
		name, dir, tools string
		offered          []string
		warn             []string
	}{
		{"Claude Code's names in .dshd/commands", ".dshd/commands", "Read, Grep", []string{"grep", "read_file"}, nil},
		{"Claude Code's names in .claude/commands", ".claude/commands", "Read, Bash(git status:*)", []string{"read_file", "run_command"}, nil},
		{"a misspelled Claude Code name", ".dshd/commands", "Raed, grep", []string{"grep"},
			[]string{"look.md:3:1: allowed-tools: there is no tool named \"Raed\" (the command runs with the other tools it names)", `did you mean "Read" (read_file)?`, "runs with the other tools"}},
		{"a misspelled dshd name", ".claude/commands", "read_fiel", nil,
			[]string{"look.md:3:1: allowed-tools: there is no tool named \"read_fiel\"", `did you mean "read_file"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			dir := filepath.Join(ws, filepath.FromSlash(tc.dir))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.Write(t, dir, "look.md", "---\ndescription: Look around\nallowed-tools: "+tc.tools+"\n---\nLook at $ARGUMENTS\n")
			srv := fakeModel(t)
			srv.Enqueue(openaitest.Text("Seen."))
			code, stdout, stderr := runDshd(t, nil, "prompt", "--model-url", srv.URL(), "--api-key-env", "", "--model", "m",
				"--state-dir", t.TempDir(), "--cwd", ws, "/look here")
			if code != 0 || stdout != "Seen.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
			}
			reqs := srv.ChatRequests()
			if len(reqs) != 1 {
				t.Fatalf("%d chat requests, want 1", len(reqs))
			}
			if got := toolNames(reqs[0]); !slices.Equal(got, tc.offered) {
				t.Errorf("the command's turn was offered %v, want %v", got, tc.offered)
			}
			for _, w := range tc.warn {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.warn == nil && strings.Contains(stderr, "look.md") {
				t.Errorf("stderr tells of a mistake in look.md:\n%s", stderr)
			}
			if n := strings.Count(stderr, "there is no tool named"); len(tc.warn) > 0 && n != 1 {
				t.Errorf("the mistake is told %d times, want once:\n%s", n, stderr)
			}
		})
	}
}
