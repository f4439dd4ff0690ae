package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestExpand_ReplacesArgumentsAndNumberedWords(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"Fix issue #$ARGUMENTS following our standards.", "123 now", "Fix issue #123 now following our standards."},
		{"Review PR #$1 with priority $2 and assign to $3.", `456 high "Ann Lee"`, "Review PR #456 with priority high and assign to Ann Lee."},
		{"Missing: [$4]", "a b", "Missing: []"},
		{"Costs $5.00 and $x; all: $ARGUMENTS", "", "Costs .00 and $x; all: "},
		{"Summarise the changes.", "in French", "Summarise the changes.\n\nin French"},
		{"Trailing dollar $", "", "Trailing dollar $"},
	} {
		if got := (Command{Body: tc.body}).Expand(tc.args); got != tc.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tc.body, tc.args, got, tc.want)
		}
	}
}

func TestSplit_ReadsASlashCommandAndItsArguments(t *testing.T) {
	for _, tc := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/review 12 high", "review", "12 high", true},
		{"  /compact", "compact", "", true},
		{"/fix\nmore lines", "fix", "more lines", true},
		{"/ not a command", "", "", false},
		{"/usr/bin/ls is a path", "", "", false},
		{"please /review", "", "", false},
	} {
		name, args, ok := Split(tc.in)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v", tc.in, name, args, ok)
		}
	}
}

func TestLoad_ReadsFilesWithTheWorkspaceFirstAndKeepsTheBuiltinsNames(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	testkit.Write(t, filepath.Join(ws, ".dshd", "commands"), "review.md", "---\ndescription: Review a pull request\nargument-hint: PR-NUMBER [PRIORITY]\nallowed-tools: [read_file, grep]\nmodel: deepseek-reasoner\n---\nReview PR #$1 at priority $2.\n")
	testkit.Write(t, filepath.Join(ws, ".claude", "commands"), "review.md", "Claude's review: $ARGUMENTS\n")
	testkit.Write(t, filepath.Join(ws, ".claude", "commands"), "commit.md", "---\nallowed-tools: Bash(git add:*), Bash(git commit:*), Read\ndescription: Create a git commit\n---\n## Context\n\nCommit $ARGUMENTS\n")
	testkit.Write(t, filepath.Join(home, "dshd", "commands"), "standup.md", "# Write my standup\n\nFrom the git log.\n")
	bad := testkit.Write(t, filepath.Join(home, "dshd", "commands"), "compact.md", "Not allowed.\n")
	cmds, errs := Load(append(WorkspaceSources(ws), UserSources(home)...), Limits{})
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), bad+": /compact is a built-in command") {
		t.Fatalf("errs = %v", errs)
	}
	byName := map[string]Command{}
	var names []string
	for _, c := range cmds {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"compact", "init", "agents", "tasks", "review", "commit", "standup"}) {
		t.Fatalf("names = %v", names)
	}
	r := byName["review"]
	if r.Description != "Review a pull request" || r.ArgumentHint != "PR-NUMBER [PRIORITY]" || !slices.Equal(r.AllowedTools, []string{"read_file", "grep"}) ||
		r.Model != "deepseek-reasoner" || r.Expand("7 high") != "Review PR #7 at priority high." {
		t.Fatalf("review = %+v", r)
	}
	if c := byName["commit"]; !slices.Equal(c.AllowedTools, []string{"run_command", "read_file"}) || c.Description != "Create a git commit" {
		t.Fatalf("commit = %+v", c)
	}
	if s := byName["standup"]; s.Description != "Write my standup" {
		t.Fatalf("a file without front matter is described by its first line: %+v", s)
	}
}

func TestLoad_AMistakeNamesTheFileAndTheKey(t *testing.T) {
	ws := t.TempDir()
	p := testkit.Write(t, filepath.Join(ws, ".dshd", "commands"), "x.md", "---\ndescription: d\nallowed_tools: [grep]\n---\nbody\n")
	cmds, errs := Load(WorkspaceSources(ws), Limits{})
	if len(cmds) != len(Builtins()) || len(errs) != 1 || !strings.Contains(errs[0].Error(), p+":3:1: allowed_tools: unknown key") ||
		!strings.Contains(errs[0].Error(), `did you mean "allowed-tools"?`) {
		t.Fatalf("cmds %d, errs %v", len(cmds), errs)
	}
}

// A command file of the bound's size is used; one byte more is a mistake
// naming the file and the setting, and the default bound takes it.
func TestLoad_AFileOverTheBoundIsAMistakeNamingTheSetting(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	body := "Say it.\n" + strings.Repeat("x", 92) // 100 bytes
	testkit.Write(t, dir, "fits.md", body)
	over := testkit.Write(t, dir, "over.md", body+"\n")
	limits := Limits{MaxFileBytes: 100, Settings: Settings{MaxFileBytes: "--max-command-file-bytes"}}
	cmds, errs := Load(WorkspaceSources(ws), limits)
	want := over + ": 101 bytes; a command file may have at most 100 (--max-command-file-bytes)"
	if len(cmds) != len(Builtins())+1 || cmds[len(cmds)-1].Name != "fits" || len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("cmds %d, errs %v; want fits and the error %q", len(cmds), errs, want)
	}
	if cmds, errs := Load(WorkspaceSources(ws), Limits{}); len(cmds) != len(Builtins())+2 || len(errs) != 0 {
		t.Fatalf("within the default bound: cmds %d, errs %v", len(cmds), errs)
	}
}

func TestCatalog_FollowsTheFiles(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "a.md", "A $ARGUMENTS\n")
	c := NewCatalog(WorkspaceSources(ws), Limits{})
	if _, ok := c.Lookup("a"); !ok || c.Refresh() {
		t.Fatal("a is missing, or an unchanged catalog says it changed")
	}
	testkit.Write(t, dir, "b.md", "B\n")
	if !c.Refresh() {
		t.Fatal("a new file did not change the catalog")
	}
	if cmd, ok := c.Lookup("b"); !ok || cmd.Expand("") != "B" {
		t.Fatalf("b = %+v, %v", cmd, ok)
	}
	os.Remove(filepath.Join(dir, "a.md"))
	if !c.Refresh() {
		t.Fatal("a deleted file did not change the catalog")
	}
	if _, ok := c.Lookup("a"); ok {
		t.Fatal("a deleted command is still there")
	}
	if _, ok := c.Lookup(Compact); !ok {
		t.Fatal("no built-in")
	}
}

func TestBuiltinPrompt_InitIsAPromptAndTheOthersAreNot(t *testing.T) {
	text, ok := BuiltinPrompt(Init, "mention the Docker setup")
	if !ok || !strings.HasPrefix(text, "Write or update AGENTS.md") || !strings.HasSuffix(text, "Also: mention the Docker setup") {
		t.Fatalf("init = %q, %v", text, ok)
	}
	for _, name := range []string{Compact, Agents, "review"} {
		if _, ok := BuiltinPrompt(name, ""); ok {
			t.Fatalf("%s is a prompt", name)
		}
	}
}

func TestReadme_TheExampleCommandExpandsAsItSays(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "A command with arguments, `.dshd/commands/fix-issue.md`:\n\n```markdown\n")
	body, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("the README's command example is missing")
	}
	ws := t.TempDir()
	testkit.Write(t, filepath.Join(ws, ".dshd", "commands"), "fix-issue.md", body+"\n")
	cmds, errs := Load(WorkspaceSources(ws), Limits{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	c := cmds[len(cmds)-1]
	got := c.Expand("1234 parser")
	if c.Name != "fix-issue" || c.ArgumentHint != "ISSUE-NUMBER [AREA]" || !strings.Contains(got, "Fix issue #1234 in this repository, in the parser part") ||
		!strings.Contains(got, "gh issue view 1234") {
		t.Fatalf("%+v expands to %q", c, got)
	}
}
