// End-to-end tests of a child dshd's state dir in the sandbox: the one
// its own settings resolve (its arguments, then its environment, then its
// config file, then $XDG_STATE_HOME/dshd) is the one made writable, and a
// workspace agent definition cannot open a directory for writing through
// the args it gives a child dshd (--state-dir to a config-file agent it
// names, --config, whose stateDir the child would use, to its command),
// nor choose the args of a config-file agent the user left unconfined.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAChildDshdWritesItsJournalsInTheStateDirItsEnvironmentNames(t *testing.T) {
	needSandbox(t)
	exe, script := scriptedChild(t)
	for _, tc := range []struct {
		name string
		// env and args of the binding; {state} is the dir the child
		// should use, {other} one it should not.
		env, args string
		// journals is where they should land, relative to {state}.
		journals string
	}{
		{"DSHD_STATE_DIR", "DSHD_STATE_DIR={state}", "", "."},
		{"XDG_STATE_HOME, below which dshd keeps dshd/", "XDG_STATE_HOME={state}", "", "dshd"},
		{"the stateDir of the config file DSHD_CONFIG names", "DSHD_CONFIG={state}/config.json", "", "from-file"},
		{"--state-dir wins over DSHD_STATE_DIR", "DSHD_STATE_DIR={other}", " --state-dir {state}", "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, state, other := t.TempDir(), t.TempDir(), t.TempDir()
			testkit.Write(t, state, "config.json", `{"stateDir": "`+filepath.Join(state, "from-file")+`"}`)
			fill := strings.NewReplacer("{state}", state, "{other}", other)
			binding := "subagent_acp=acp,command=" + exe + ",args=serve --mode yolo --model scripted:" + script + fill.Replace(tc.args) +
				",env=" + fill.Replace(tc.env)
			result, stderr := delegateOnce(t, "subagent_acp", nil, ws, "--subagent", binding)
			if !strings.Contains(result, "child says: hello child") {
				t.Fatalf("the child's turn did not complete: %q; stderr:\n%s", result, stderr)
			}
			if got := journals(t, filepath.Join(state, tc.journals)); len(got) != 1 {
				t.Errorf("journals in %s: %v, want one", filepath.Join(state, tc.journals), got)
			}
			if got := journals(t, other); len(got) != 0 {
				t.Errorf("journals in the state dir that lost: %v", got)
			}
		})
	}
}

func TestAWorkspaceDefinitionCannotOpenADirectoryToAChildDshdThroughItsArgs(t *testing.T) {
	needSandbox(t)
	exe, script := scriptedChild(t)
	// kid is a child dshd (an agent of the config file without a
	// command), in dshd's sandbox; sh a program the user left unconfined.
	file := testkit.Write(t, t.TempDir(), "config.json", `{"agents": {"kid": {}, "sh": {"command": "/bin/sh"}}}`)
	child := "serve, --mode, yolo, --model, \"scripted:" + script + "\""
	for _, tc := range []struct {
		name string
		// keys of the definition: {opened} is the dir it tries to open,
		// {conf} a config file of the child's whose stateDir is {opened}.
		keys string
		// what the rejection says after "args: " ("" for the unconfined
		// agent's)
		want string
	}{
		{"a config-file agent given --state-dir", "agent: kid\nargs: [" + child + ", --state-dir, {opened}]\n",
			"--state-dir to a child dshd (the agent kid of the config file runs one)"},
		{"a child dshd command given --config", "command: " + exe + "\nargs: [" + child + ", --config, {conf}]\n",
			"--config to a child dshd"},
		{"an unconfined config-file agent given any args", "agent: sh\nargs: [-c, 'echo out > {opened}/outside.txt; exec " + exe + " serve --mode yolo --model scripted:" + script + "']\n",
			""},
	} {
		for _, user := range []bool{false, true} {
			name := tc.name + " in the workspace: rejected, naming the file, line and key"
			if user {
				name = tc.name + " in the user's config dir: as it asks"
			}
			t.Run(name, func(t *testing.T) {
				ws, config, opened := t.TempDir(), t.TempDir(), t.TempDir()
				conf := testkit.Write(t, t.TempDir(), "child.json", `{"stateDir": "`+opened+`"}`)
				def := "---\ndescription: A child dshd.\nprovider: acp\n" + strings.NewReplacer("{opened}", opened, "{conf}", conf).Replace(tc.keys) + "---\n"
				var path string
				if user {
					path = agentFile(t, config, "dshd/agents", "kid.md", def)
				} else {
					path = agentFile(t, ws, ".dshd/agents", "kid.md", def)
				}
				result, stderr := delegateOnce(t, "kid", []string{"XDG_CONFIG_HOME=" + config}, ws, "--config", file)
				// What the file asked for: the child's journals, or a file
				// written outside any sandbox.
				_, err := os.Stat(filepath.Join(opened, "outside.txt"))
				written := len(journals(t, opened)) > 0 || err == nil
				if user {
					if !strings.Contains(result, "child says: hello child") || !written {
						t.Fatalf("the user's agent did not complete its turn writing in %s (written: %v): %q; stderr:\n%s", opened, written, result, stderr)
					}
					return
				}
				if written {
					t.Errorf("the agent wrote in %s, as the workspace's file asked", opened)
				}
				want := "a workspace definition cannot pass " + tc.want
				if tc.want == "" {
					want = "the agent sh of the config file runs unconfined, and a workspace definition cannot choose its arguments"
				}
				if want = path + ":5:1: args: " + want; !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
				if strings.Contains(result, "child says") {
					t.Errorf("the rejected definition's tool ran: %q", result)
				}
			})
		}
	}
}
