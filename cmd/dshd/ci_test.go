// End-to-end tests that the README's CI section is true: the permission
// table is what `dshd prompt` does, every flag its examples use exists,
// and its GitHub Actions step runs.

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/shellwords"
)

// readmeSection returns the README's section under heading (a "## "
// line), up to the next "## " heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the README has no %q section", heading)
	}
	s = s[i+1+len(heading):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

var flagRef = regexp.MustCompile(`--[a-z][a-z-]*`)

// helpFlags are the flags `dshd args... --help` lists.
func helpFlags(t *testing.T, args ...string) map[string]bool {
	t.Helper()
	code, _, help := runDshd(t, nil, append(args, "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: exit %d:\n%s", args, code, help)
	}
	out := map[string]bool{}
	for _, f := range flagRef.FindAllString(help, -1) {
		out[f] = true
	}
	return out
}

func TestTheREADMEsCISectionNamesOnlyWhatDshdOffers(t *testing.T) {
	ci := readmeSection(t, "## Headless runs and CI: `dshd prompt`")
	for _, want := range []string{"### Permissions in CI", "--yes", "--mode accept-edits", "--mode yolo", "```yaml"} {
		if !strings.Contains(ci, want) {
			t.Errorf("the CI section does not cover %q", want)
		}
	}
	prompt := helpFlags(t, "prompt")
	for line := range strings.Lines(ci) {
		if !strings.Contains(line, "dshd prompt") && !strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		for _, f := range flagRef.FindAllString(line, -1) {
			if !prompt[f] {
				t.Errorf("the README uses %s, which dshd prompt does not offer: %s", f, strings.TrimSpace(line))
			}
		}
	}
	sessions := readmeSection(t, "## Sessions from the command line")
	for line := range strings.Lines(sessions) {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "dshd" || fields[1] != "sessions" {
			continue
		}
		offered := helpFlags(t, "sessions", fields[2])
		for _, f := range flagRef.FindAllString(line, -1) {
			if !offered[f] {
				t.Errorf("the README uses %s, which dshd sessions %s does not offer", f, fields[2])
			}
		}
	}
}

func TestTheREADMEsGitHubActionsStepRuns(t *testing.T) {
	ci := readmeSection(t, "## Headless runs and CI: `dshd prompt`")
	_, yaml, ok := strings.Cut(ci, "```yaml\n")
	yaml, _, _ = strings.Cut(yaml, "```")
	_, script, found := strings.Cut(yaml, "run: |\n")
	if !ok || !found {
		t.Fatalf("no yaml step with a run script in the CI section")
	}
	cmdline, _, _ := strings.Cut(script, ">")
	// The step as sh reads it: a backslash at a line's end continues it.
	words, err := shellwords.Split(strings.ReplaceAll(cmdline, "\\\n", " "))
	if err != nil {
		t.Fatalf("the step's command %q: %v", cmdline, err)
	}
	if len(words) < 3 || words[0] != "dshd" || words[1] != "prompt" {
		t.Fatalf("the step's command is %q, want a dshd prompt", words)
	}
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("Fixed."))
	args := append([]string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--cwd", t.TempDir()}, words[2:]...)
	code, stdout, stderr := runDshd(t, nil, args...)
	if code != 0 || !strings.Contains(stdout[strings.LastIndex(strings.TrimSpace(stdout), "\n")+1:], `{"stopReason":"end_turn"`) {
		t.Fatalf("the README's step: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

func TestPromptAnswersPermissionsAsTheREADMEsTableSays(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		flags                  []string
		edit, command, control bool // what is done
		asks                   bool // questions show on stderr
	}{
		{"ask", nil, false, false, false, true},
		{"accept-edits", []string{"--mode", "accept-edits"}, true, false, false, true},
		{"--yes", []string{"--yes"}, true, true, true, true},
		{"yolo", []string{"--mode", "yolo"}, true, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModel(t)
			srv.Enqueue(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{
					{ID: "call_1", Name: "write_file", Arguments: `{"path":"out.txt","content":"edited"}`},
					{ID: "call_2", Name: "run_command", Arguments: `{"command":"echo ran > ran.txt"}`},
					{ID: "call_3", Name: "write_file", Arguments: `{"path":".dshd/notes.md","content":"control"}`},
				}},
				openaitest.Text("done"),
			)
			cwd := t.TempDir()
			code, _, stderr := runDshd(t, nil, append(promptAt(srv, t.TempDir(), cwd, tc.flags...), "go")...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			for _, f := range []struct {
				path string
				want bool
			}{{"out.txt", tc.edit}, {"ran.txt", tc.command}, {".dshd/notes.md", tc.control}} {
				_, err := os.Stat(filepath.Join(cwd, f.path))
				if got := err == nil; got != f.want {
					t.Errorf("%s exists: %v, want %v; stderr:\n%s", f.path, got, f.want, stderr)
				}
			}
			if asked := strings.Contains(stderr, "\n? ") || strings.HasPrefix(stderr, "? "); asked != tc.asks {
				t.Errorf("questions on stderr: %v, want %v:\n%s", asked, tc.asks, stderr)
			}
		})
	}
}
