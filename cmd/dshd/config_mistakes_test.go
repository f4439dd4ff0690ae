// End-to-end tests of configuration mistakes: each one stops a real dshd
// at start with exit 2, nothing on stdout and one line on stderr that
// names the setting, where its value came from and, where there is one,
// the closest valid name.

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// mistake is one wrong configuration and what its line must say.
type mistake struct {
	name string
	// file, when set, is written as the config file (passed with --config).
	file string
	env  []string
	args []string
	// want are substrings of the one stderr line; "FILE" stands for the
	// config file's path.
	want []string
}

func TestAMistakeInTheConfigurationStopsDshdAtStartWithOneLineSayingWhatAndWhere(t *testing.T) {
	agents := `{"agents": {"codex": {"command": "codex-acp"}}}`
	cases := []mistake{
		// The config file: unknown keys, syntax, types, values.
		{name: "an unknown key suggests the closest", file: "{\n  \"modle\": \"scripted\"\n}",
			want: []string{"FILE:2:3", `unknown key "modle"`, `did you mean "model"?`}},
		{name: "a key in the wrong case suggests the right one", file: `{"model": "scripted", "maxdepth": 2}`,
			want: []string{"FILE:1:23", `"maxdepth"`, `did you mean "maxDepth"?`}},
		{name: "a JSON syntax error gives line and column", file: "{\n  \"mode\": \"ask\",\n  \"model\" \"scripted\"\n}",
			want: []string{"FILE:3:11", "JSON"}},
		{name: "a truncated file gives where it ends", file: "{\"mode\": ",
			want: []string{"FILE:1:", "JSON", "end"}},
		{name: "a value of the wrong type", file: `{"maxDepth": "3"}`,
			want: []string{"FILE:1:14", "maxDepth", "number"}},
		{name: "a bad mode in the file", file: "{\"model\": \"scripted\",\n \"mode\": \"yol\"}",
			want: []string{"FILE:2:10", "mode", `"yol"`, `did you mean "yolo"?`}},
		{name: "a negative number in the file", file: `{"maxTurnRequests": -4}`,
			want: []string{"FILE:1:21", "maxTurnRequests", "-4"}},
		{name: "not an object", file: `["model"]`,
			want: []string{"FILE:1:1", "object"}},
		{name: "an unknown key in a named agent", file: `{"agents": {"codex": {"comand": "codex-acp"}}}`,
			want: []string{"FILE:1:23", "agents.codex", `"comand"`, `did you mean "command"?`}},
		{name: "a bad address in a named agent", file: `{"agents": {"farm": {"address": "farm:7777"}}}`,
			want: []string{"FILE:1:13", "agents.farm", "address", "unix:PATH, tcp:HOST:PORT"}},
		{name: "a negative timeout in a named agent", file: `{"agents": {"slow": {"command": "x", "timeoutSeconds": -1}}}`,
			want: []string{"FILE:1:56", "timeoutSeconds", "-1"}},
		{name: "a named agent's mistake names the key as the file spells it", file: `{"agents": {"kid": {"command": "x", "passEnv": ["1BAD"]}}}`,
			want: []string{"FILE:1:13", "agents.kid: passEnv:", `"1BAD" is not a variable name`}},
		{name: "a bad binding in the file", file: "{\"subagents\": [\n  \"a=spawn\",\n  \"b=nonsense\"\n]}",
			want: []string{"FILE:3:3", `"b=nonsense"`, `unknown provider "nonsense"`}},

		// Bindings.
		{name: "an unknown provider", args: []string{"--subagent", "x=nonsense"},
			want: []string{`--subagent "x=nonsense"`, `unknown provider "nonsense"`, "spawn, fork, acp"}},
		{name: "a mistyped provider suggests the closest", args: []string{"--subagent", "x=spwan"},
			want: []string{`--subagent "x=spwan"`, `did you mean "spawn"?`}},
		{name: "an option spawn does not take", args: []string{"--subagent", "x=spawn,command=codex-acp"},
			want: []string{`--subagent "x=spawn,command=codex-acp"`, `unknown option "command"`}},
		{name: "a mistyped acp option suggests the closest", args: []string{"--subagent", "x=acp,comand=codex-acp"},
			want: []string{`unknown option "comand"`, `did you mean "command"?`}},
		{name: "an unterminated quote in args", args: []string{"--subagent", "x=acp,args='serve"},
			want: []string{`--subagent "x=acp,args='serve"`, "args", "unterminated"}},
		{name: "a bad address", args: []string{"--subagent", "x=acp,address=nowhere"},
			want: []string{"address", `"nowhere"`, "unix:PATH, tcp:HOST:PORT"}},
		{name: "a timeout that is not a duration", args: []string{"--subagent", "x=acp,timeout=abc"},
			want: []string{"timeout", `"abc"`}},
		{name: "a zero timeout", args: []string{"--subagent", "x=acp,start-timeout=0"},
			want: []string{"start-timeout", `"0"`}},
		{name: "an unknown named agent suggests the closest", file: agents, args: []string{"--subagent", "x=acp,agent=codx"},
			want: []string{`--subagent "x=acp,agent=codx"`, `"codx"`, `did you mean "codex"?`}},
		{name: "a bad binding in the environment", env: []string{"DSHD_SUBAGENT=a=spawn;b=nonsense"},
			want: []string{`DSHD_SUBAGENT "b=nonsense"`, `unknown provider "nonsense"`}},
		{name: "a binding without a provider", args: []string{"--subagent", "helper"},
			want: []string{`--subagent "helper"`, "TOOLNAME=PROVIDER"}},

		// Flags and environment variables.
		{name: "a bad mode flag", args: []string{"--mode", "nonsense"},
			want: []string{`--mode "nonsense"`, "ask, accept-edits, yolo"}},
		{name: "a bad mode variable", env: []string{"DSHD_MODE=nonsense"},
			want: []string{`DSHD_MODE "nonsense"`, "ask, accept-edits, yolo"}},
		{name: "a mistyped backend", args: []string{"--backend", "deepsek"},
			want: []string{`--backend "deepsek"`, `did you mean "deepseek"?`}},
		{name: "a bad thinking value", args: []string{"--thinking", "maybe"},
			want: []string{`--thinking "maybe"`, "on, off"}},
		{name: "a bad log level", args: []string{"--log-level", "verbose"},
			want: []string{`--log-level "verbose"`, "debug, info, warn, error"}},
		{name: "a negative depth", args: []string{"--max-depth", "-1"},
			want: []string{`--max-depth "-1"`, "0 or more"}},
		{name: "zero turn requests", args: []string{"--max-turn-requests", "0"},
			want: []string{`--max-turn-requests "0"`, "1 or more"}},
		{name: "no held child updates", args: []string{"--max-held-child-updates", "0"},
			want: []string{`--max-held-child-updates "0"`, "1 or more"}},
		{name: "a negative count of held child updates", args: []string{"--max-held-child-updates", "-1"},
			want: []string{`--max-held-child-updates "-1"`, "1 or more"}},
		{name: "held child updates that are no number", env: []string{"DSHD_MAX_HELD_CHILD_UPDATES=abc"},
			want: []string{`DSHD_MAX_HELD_CHILD_UPDATES "abc"`, "whole number"}},
		{name: "no held child updates in the file", file: `{"maxHeldChildUpdates": 0}`,
			want: []string{"FILE:1:", "maxHeldChildUpdates", "1 or more"}},
		{name: "a number that is not one", env: []string{"DSHD_MAX_DEPTH=abc"},
			want: []string{`DSHD_MAX_DEPTH "abc"`, "whole number"}},
		{name: "a bad listen address", args: []string{"--listen", "nowhere"},
			want: []string{`--listen "nowhere"`, "unix:PATH, tcp:HOST:PORT"}},
		{name: "a listen port out of range", args: []string{"--listen", "tcp:127.0.0.1:70000"}, env: []string{"DSHD_TOKEN=0123456789abcdef0123"},
			want: []string{`--listen "tcp:127.0.0.1:70000"`, "port"}},
		{name: "a model URL without a scheme", args: []string{"--model-url", "localhost:8080/v1"},
			want: []string{`--model-url "localhost:8080/v1"`, "http"}},
		{name: "a bad key variable name", args: []string{"--api-key-env", "MY KEY"},
			want: []string{`--api-key-env "MY KEY"`, "variable name"}},
		{name: "a missing config file", args: []string{"--config", "/nonexistent/dshd.json"},
			want: []string{`--config "/nonexistent/dshd.json"`, "no such file"}},
		{name: "a mistyped flag suggests the closest", args: []string{"--modle", "scripted"},
			want: []string{"--modle", "unknown flag", "did you mean --model?"}},
		{name: "a flag without its value", args: []string{"--mode"},
			want: []string{"--mode", "needs a value"}},
		{name: "a serve setting on prompt is refused", args: []string{"prompt", "--listen", "unix:/tmp/x.sock", "hi"},
			want: []string{"--listen", "dshd prompt", "serve"}},
		{name: "an unknown command", args: []string{"serv"},
			want: []string{`"serv"`, "serve"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The command (if any) comes first and the case's own arguments
			// last, so a flag left without its value stays without one.
			var args, own []string
			if len(tc.args) > 0 && !strings.HasPrefix(tc.args[0], "-") {
				args, own = []string{tc.args[0]}, tc.args[1:]
			} else {
				own = tc.args
			}
			args = append(args, "--state-dir", t.TempDir())
			if !strings.Contains(tc.file, `"model"`) && !hasModel(tc.args) {
				// No key is needed: the mistake must be found before the
				// model is.
				args = append(args, "--model", "scripted")
			}
			checkMistake(t, tc, args, own)
		})
	}
}

func hasModel(args []string) bool {
	for _, a := range args {
		if a == "--model" {
			return true
		}
	}
	return false
}

// runServeMistakes runs each case as its own dshd with no command (so
// serve), a state dir, the scripted model, the case's config file and its
// own arguments.
func runServeMistakes(t *testing.T, cases []mistake) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkMistake(t, tc, []string{"--state-dir", t.TempDir(), "--model", "scripted"}, tc.args)
		})
	}
}

// checkMistake runs dshd with the arguments before, then --config and the
// case's file when it has one, then after, and checks that it stops with
// the case's one line.
func checkMistake(t *testing.T, tc mistake, before, after []string) {
	t.Helper()
	args, file := slices.Clone(before), ""
	if tc.file != "" {
		file = testkit.Write(t, t.TempDir(), "config.json", tc.file)
		args = append(args, "--config", file)
	}
	args = append(args, after...)
	code, stdout, stderr := runDshd(t, tc.env, args...)
	if code != 2 {
		t.Fatalf("dshd %s: exit %d, want 2; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	if stdout != "" {
		t.Fatalf("stdout %q, want nothing", stdout)
	}
	line, rest, _ := strings.Cut(stderr, "\n")
	if rest != "" || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr is not one line:\n%s", stderr)
	}
	for _, w := range tc.want {
		if file != "" {
			w = strings.ReplaceAll(w, "FILE", file)
		}
		if !strings.Contains(line, w) {
			t.Errorf("the line lacks %q:\n%s", w, line)
		}
	}
}

func TestPromptHelpListsOnlyWhatPromptUses(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "prompt", "--help")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	help := stdout + stderr
	for _, want := range []string{"--model", "--mode", "--subagent", "--json", "--yes", "--config"} {
		if !strings.Contains(help, want+" ") {
			t.Errorf("prompt --help lacks %s", want)
		}
	}
	for _, unwanted := range []string{"--listen", "--token", "DSHD_LISTEN"} {
		if strings.Contains(help, unwanted) {
			t.Errorf("prompt --help offers %s, which prompt does not use", unwanted)
		}
	}
}

func TestASettingOfAnotherCommandInTheFileOrEnvironmentIsNoMistake(t *testing.T) {
	// One config file serves every command: prompt ignores listen.
	file := testkit.Write(t, t.TempDir(), "config.json", `{"listen": "unix:/tmp/never.sock", "model": "scripted"}`)
	code, stdout, stderr := runDshd(t, []string{"DSHD_TOKEN=x"}, "prompt", "--config", file, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 0 || stdout != "You said: hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

func TestAValidConfigFileWithAgentsAndBindingsStarts(t *testing.T) {
	dir := t.TempDir()
	file := testkit.Write(t, dir, "config.json", `{
  "model": "scripted",
  "mode": "accept-edits",
  "maxDepth": 2,
  "subagents": ["subagent=spawn", "codex=acp,agent=codex,timeout=90s", "remote=acp,address=unix:`+filepath.Join(dir, "d.sock")+`"],
  "agents": {
    "codex": {"command": "sh", "args": ["--x"], "env": {"A": "1"}, "unsetEnv": ["B"], "cwd": "session",
              "timeoutSeconds": 900, "startTimeoutSeconds": 60, "forwardMcpServers": true}
  }
}`)
	code, stdout, stderr := runDshd(t, nil, "prompt", "--config", file, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 0 || stdout != "You said: hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}
