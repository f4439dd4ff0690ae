// End-to-end tests of a child dshd's state dir in the sandbox: the one
// its own settings resolve (its arguments, then its environment, then its
// config file, then $XDG_STATE_HOME/dshd) is the one made writable, and a
// workspace agent definition cannot open a directory for writing, or
// loosen the child's sandbox, through a config-file agent it names.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// delegateOnce runs one dshd prompt in ws, in the default sandbox, whose
// model delegates to tool, and returns what the tool answered and
// dshd's stderr.
func delegateOnce(t *testing.T, tool string, env []string, ws string, args ...string) (result, stderr string) {
	t.Helper()
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("parent done")
		}
		return subagentCall("call_1", tool, "hello child")
	})
	code, stdout, stderr := runDshd(t, env, append([]string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "",
		"--state-dir", t.TempDir(), "--cwd", ws, "--mode", "yolo"}, append(args, "delegate")...)...)
	if code != 0 || stdout != "parent done\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	return strings.Join(toolResults(srv), "\n"), stderr
}

func TestAChildDshdWritesItsJournalsInTheStateDirItsEnvironmentNames(t *testing.T) {
	needSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := testkit.Write(t, t.TempDir(), "child.json", `{"rules": [{"text": "child says: {{user}}"}]}`)
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
