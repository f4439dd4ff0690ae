// End-to-end tests of what a real dshd checks at start beyond the values
// themselves: a --thinking the backend cannot apply, an acp agent's
// program that is not there (each stops dshd with exit 2 and one line),
// and a DSHD_* variable that names no setting (a warning: the
// environment is shared with other programs).

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAThinkingSettingTheBackendCannotApplyStopsDshdAtStart(t *testing.T) {
	// The server is never reached: the mistake is found first.
	url := []string{"--model-url", "http://127.0.0.1:9/v1", "--api-key-env", ""}
	cases := []mistake{
		{name: "openai with --thinking off", args: append([]string{"prompt", "--backend", "openai", "--thinking", "off"}, url...),
			want: []string{`--thinking "off"`, "the openai backend has no thinking switch", "deepseek"}},
		{name: "ollama with DSHD_THINKING=on", env: []string{"DSHD_THINKING=on"}, args: append([]string{"prompt", "--backend", "ollama"}, url...),
			want: []string{`env DSHD_THINKING "on"`, "the ollama backend has no thinking switch"}},
		{name: "a generic server with thinking in the file", file: `{"thinking": "off"}`, args: append([]string{"prompt", "--model", "m"}, url...),
			want: []string{"FILE:1:14: thinking", `"off"`, "the openai-compatible backend has no thinking switch"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkMistake(t, tc, []string{tc.args[0], "--state-dir", t.TempDir(), "--cwd", t.TempDir()}, append(tc.args[1:], "hi"))
		})
	}
}

func TestAnACPAgentWhoseProgramIsNotThereStopsDshdAtStart(t *testing.T) {
	cases := []mistake{
		{name: "a binding's command at a path that does not exist", args: []string{"--subagent", "x=acp,command=/no/such/agent-acp"},
			want: []string{`--subagent "x=acp,command=/no/such/agent-acp"`, `command "/no/such/agent-acp"`, "no such file"}},
		{name: "a binding's command on no PATH", args: []string{"--subagent", "x=acp,command=dshd-no-such-agent-acp"},
			want: []string{`--subagent "x=acp,command=dshd-no-such-agent-acp"`, `command "dshd-no-such-agent-acp"`, "not found in PATH"}},
		{name: "a named agent's command, bound or not", file: `{"agents": {"codex": {"command": "dshd-no-such-codex-acp"}}}`,
			want: []string{"FILE:1:13: agents.codex", `command "dshd-no-such-codex-acp"`, "not found in PATH"}},
		{name: "a command that is a directory", args: []string{"--subagent", "x=acp,command=/"},
			want: []string{`command "/"`, "not a program"}},
	}
	runServeMistakes(t, cases)
}

func TestAnACPAgentWithoutAProgramToLookUpStarts(t *testing.T) {
	dir := t.TempDir()
	// A path relative to the child's cwd (the session's) is found there
	// when a run starts; a socket agent has no program; neither is
	// looked up at start. A program on PATH and one at its path are.
	file := testkit.Write(t, dir, "config.json", `{
  "model": "scripted",
  "subagents": ["rel=acp,command=./bin/agent-acp", "remote=acp,agent=farm", "sh=acp,command=sh", "abs=acp,agent=abs"],
  "agents": {"farm": {"address": "unix:`+filepath.Join(dir, "d.sock")+`"}, "abs": {"command": "`+os.Args[0]+`"}}
}`)
	code, stdout, stderr := runDshd(t, nil, "prompt", "--config", file, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 0 || stdout != "You said: hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

func TestAMisspelledDSHDVariableIsWarnedAboutOnceWithTheClosestSetting(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"prompt", []string{"prompt", "--model", "scripted", "--state-dir", "STATE", "--cwd", "CWD", "hi"}},
		{"prompt --json", []string{"prompt", "--json", "--model", "scripted", "--state-dir", "STATE", "--cwd", "CWD", "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.NewReplacer("STATE", t.TempDir(), "CWD", t.TempDir()).Replace(a)
			}
			// DSHD_TOKEN and DSHD_CONFIG are dshd's own; the key variable
			// a setting names is the user's choice.
			env := []string{"DSHD_MODLE=x", "DSHD_TOKEN=0123456789abcdef", "DSHD_MY_KEY=k", "DSHD_API_KEY_ENV=DSHD_MY_KEY"}
			code, stdout, stderr := runDshd(t, env, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if strings.Contains(stdout, "DSHD_MODLE") || !strings.Contains(stdout, "You said: hi") {
				t.Errorf("stdout %q: want the answer only", stdout)
			}
			if n := strings.Count(stderr, "DSHD_MODLE"); n != 1 {
				t.Fatalf("stderr names DSHD_MODLE %d times, want once:\n%s", n, stderr)
			}
			line := stderr[strings.LastIndex(stderr[:strings.Index(stderr, "DSHD_MODLE")], "\n")+1:]
			line, _, _ = strings.Cut(line, "\n")
			for _, w := range []string{"no such setting", "DSHD_MODEL"} {
				if !strings.Contains(line, w) {
					t.Errorf("the warning lacks %q: %s", w, line)
				}
			}
			for _, own := range []string{"DSHD_TOKEN", "DSHD_MY_KEY", "DSHD_API_KEY_ENV"} {
				if strings.Contains(stderr, own) {
					t.Errorf("stderr names %s, which is no mistake:\n%s", own, stderr)
				}
			}
		})
	}
}
