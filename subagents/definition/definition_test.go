package definition_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/definition"
	"github.com/dshd/dshd/subagents/subagenttest"
)

func parse(t *testing.T, name, text string, dialect definition.Dialect) (*definition.Definition, error) {
	t.Helper()
	path := testkit.Write(t, t.TempDir(), name, text)
	return definition.Parse(path, []byte(text), dialect, definition.ScopeWorkspace)
}

func TestParse_EveryKeyOfDshdsFormatSetsItsBindingOption(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, dir, "answer.json", `{"type":"object","required":["verdict"]}`)
	text := `---
name: reviewer
description: Reviews the current diff and reports bugs; never edits.
provider: spawn
tools: [read_file, grep, glob]
disallowedTools: run_command
model: deepseek-reasoner
outputSchema: answer.json
maxDepth: 0
maxTurns: 20
maxTokens: 200000
permissions: deny
background: true
---

You review code in {{cwd}}.
`
	path := testkit.Write(t, dir, "reviewer.md", text)
	d, err := definition.Parse(path, []byte(text), definition.DSHD, definition.ScopeWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	b := d.Binding
	if b.ToolName != "reviewer" || b.Provider != "spawn" || !strings.HasPrefix(b.Description, "Reviews the current diff") ||
		!slices.Equal(b.Tools.Allow, []string{"read_file", "grep", "glob"}) || !slices.Equal(b.Tools.Deny, []string{"run_command"}) ||
		b.AgentOptions.Model != "deepseek-reasoner" || !strings.Contains(string(b.OutputSchema), `"verdict"`) ||
		b.OutputSchemaFile != filepath.Join(dir, "answer.json") || *b.MaxDepth != 0 ||
		b.Budget != (subagents.Budget{MaxTurns: 20, MaxTokens: 200000}) || !b.DenyPermissions || !b.Background ||
		b.AgentOptions.SystemPrompt != "You review code in {{cwd}}." {
		t.Fatalf("binding = %+v", b)
	}
}

func TestParse_AnInlineSchemaAndAnAcpAgentWithItsCommand(t *testing.T) {
	d, err := parse(t, "codex.md", `---
description: Runs a task in Codex.
provider: acp
command: codex-acp
args: [--profile, "my work"]
model: inherit
outputSchema:
  type: object
  properties:
    summary: {type: string}
---
`, definition.DSHD)
	if err != nil {
		t.Fatal(err)
	}
	b := d.Binding
	if b.ToolName != "codex" || b.Provider != "acp" || b.Options["command"] != "codex-acp" || b.Options["args"] != "--profile 'my work'" ||
		b.AgentOptions.Model != "" || string(b.OutputSchema) != `{"type":"object","properties":{"summary":{"type":"string"}}}` || b.AgentOptions.SystemPrompt != "" {
		t.Fatalf("binding = %+v", b)
	}
}

func TestParse_AClaudeCodeAgentFileWorksUnchanged(t *testing.T) {
	d, err := parse(t, "code-reviewer.md", subagenttest.ClaudeCodeReviewer, definition.ClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	b := d.Binding
	if b.ToolName != "code-reviewer" || b.Provider != "spawn" || b.AgentOptions.Model != "" ||
		!slices.Equal(b.Tools.Allow, []string{"read_file", "grep", "glob", "run_command"}) ||
		!strings.HasPrefix(b.AgentOptions.SystemPrompt, "You are a senior code reviewer") {
		t.Fatalf("binding = %+v", b)
	}
}

func TestParse_ClaudeCodesToolNamesMapOntoDshds(t *testing.T) {
	d, err := parse(t, "all.md", "---\nname: all\ndescription: d\ntools: Read, Write, Edit, MultiEdit, Bash, Grep, Glob, LS, TodoWrite, Task, Task(code-reviewer), mcp__db__query\npermissionMode: plan\n---\n", definition.ClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"read_file", "write_file", "edit_file", "run_command", "grep", "glob", "list_dir", "plan", "subagent", "code-reviewer", "mcp__db__query"}
	if !slices.Equal(d.Binding.Tools.Allow, want) || !d.Binding.DenyPermissions {
		t.Fatalf("tools = %v, deny = %v", d.Binding.Tools.Allow, d.Binding.DenyPermissions)
	}
}

func TestParse_MistakesNameTheFileTheLineAndTheKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dialect definition.Dialect
		text    string
		line    int
		key     string
		want    string
	}{
		{"an unknown key", definition.DSHD, "---\ndescription: d\nmaxTurn: 3\n---\n", 3, "maxTurn", `unknown key (dshd takes name, description,`},
		{"a mistyped key gets a suggestion", definition.DSHD, "---\ndescription: d\ndisalowedTools: x\n---\n", 3, "disalowedTools", `did you mean "disallowedTools"?`},
		{"no description", definition.DSHD, "---\nname: x\n---\nbody\n", 0, "description", "required"},
		{"a Claude Code tool name in a dshd file", definition.DSHD, "---\ndescription: d\ntools: Read\n---\n", 3, "tools", `"Read" is a Claude Code tool name; dshd calls it "read_file"`},
		{"a Claude Code tool dshd lacks", definition.ClaudeCode, "---\nname: x\ndescription: d\ntools: Read, WebFetch\n---\n", 4, "tools", "the Claude Code tool WebFetch has no counterpart in dshd"},
		{"a Claude Code feature dshd lacks", definition.ClaudeCode, "---\nname: x\ndescription: d\nhooks: {}\n---\n", 4, "hooks", "dshd has no counterpart for Claude Code's hooks"},
		{"more permission than the parent", definition.ClaudeCode, "---\nname: x\ndescription: d\npermissionMode: bypassPermissions\n---\n", 4, "permissionMode", "more permission than the session"},
		{"an empty tool list", definition.DSHD, "---\ndescription: d\ntools: []\n---\n", 3, "tools", "empty"},
		{"a command for spawn", definition.DSHD, "---\ndescription: d\ncommand: codex-acp\n---\n", 3, "command", "only the acp provider takes command"},
		{"no turns", definition.DSHD, "---\ndescription: d\nmaxTurns: 0\n---\n", 3, "maxTurns", "from 1"},
		{"a string for a number", definition.DSHD, "---\ndescription: d\nmaxDepth: two\n---\n", 3, "maxDepth", "want a whole number"},
		{"background that is no boolean", definition.DSHD, "---\ndescription: d\nbackground: yes please\n---\n", 3, "background", `want true or false, not "yes please"`},
		{"permissions", definition.DSHD, "---\ndescription: d\npermissions: allow\n---\n", 3, "permissions", "want inherit or deny"},
		{"a missing schema file", definition.DSHD, "---\ndescription: d\noutputSchema: nope.json\n---\n", 3, "outputSchema", "no such file"},
		{"a schema that is a list", definition.DSHD, "---\ndescription: d\noutputSchema: [1]\n---\n", 3, "outputSchema", "want a JSON Schema"},
		{"a bad name", definition.DSHD, "---\nname: my agent\ndescription: d\n---\n", 2, "name", "not a valid tool name"},
		{"no front matter", definition.DSHD, "Just a prompt.\n", 0, "", "does not open with YAML front matter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, "x.md", tc.text, tc.dialect)
			var de *definition.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *definition.Error", err)
			}
			if de.Line != tc.line || de.Key != tc.key || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(de.File, "x.md") {
				t.Fatalf("err = %q (line %d, key %q), want line %d, key %q and %q", err, de.Line, de.Key, tc.line, tc.key, tc.want)
			}
			if !strings.HasPrefix(err.Error(), de.File) {
				t.Fatalf("the message does not start with the file: %q", err)
			}
		})
	}
}
