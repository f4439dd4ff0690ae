// End-to-end tests of README's "Checked at start: … each binding option and
// its value … and each named agent": a binding named like a built-in tool,
// a tools or deny-tools name no tool has (the child's start found it only
// when the model first delegated), and an agent given both a command to
// start and an address to reach (one was dropped without a word) stop dshd
// at start with exit 2, naming the binding or agent.

package main

import "testing"

func TestABindingThatCannotWorkStopsDshdAtStart(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "a binding named like a built-in tool", args: []string{"prompt", "--subagent", "read_file=spawn", "hi"},
			want: []string{`--subagent "read_file=spawn"`, `a tool named "read_file" already exists`}},
		{name: "two bindings of one name", args: []string{"prompt", "--subagent", "a=spawn", "--subagent", "a=fork", "hi"},
			want: []string{`--subagent "a=fork"`, `"a"`}},
		{name: "a tools name no tool has", args: []string{"prompt", "--subagent", "x=spawn,tools=reed_file|grep", "hi"},
			want: []string{`--subagent "x=spawn,tools=reed_file|grep"`, `there is no tool named "reed_file"`, `did you mean "read_file"?`}},
		{name: "a deny-tools name no tool has", args: []string{"prompt", "--subagent", "x=fork,deny-tools=run_comand", "hi"},
			want: []string{`--subagent "x=fork,deny-tools=run_comand"`, `"run_comand"`, `did you mean "run_command"?`}},
		{name: "a binding with a command and an address", args: []string{"prompt", "--subagent", "x=acp,command=codex-acp,address=unix:/tmp/x.sock", "hi"},
			want: []string{`--subagent "x=acp,command=codex-acp,address=unix:/tmp/x.sock"`, "give one of them"}},
		{name: "a named agent with a command and an address", file: `{"agents": {"farm": {"command": "codex-acp", "address": "unix:/tmp/x.sock"}}}`, args: []string{"prompt", "hi"},
			want: []string{"FILE:1:13", "agents.farm", "give one of them"}},
	})
}

func TestABindingsToolsMayNameBuiltinsTaskToolsOtherBindingsAndMCPTools(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "prompt", "--model", "scripted", "--state-dir", t.TempDir(), "--cwd", t.TempDir(),
		"--subagent", "ro=spawn,tools=read_file|task_list|helper|mcp__srv__search", "--subagent", "helper=spawn,deny-tools=run_command", "hi")
	if code != 0 || stdout != "You said: hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}
