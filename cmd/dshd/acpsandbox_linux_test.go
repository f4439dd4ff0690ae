// End-to-end tests of the sandbox of acp child processes: a child dshd
// started by a real dshd runs in the parent's sandbox unless its binding
// says otherwise, and a sandbox setting that cannot work stops dshd at
// start naming the binding and the key.

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// agentWrapper is an agent command that writes a file outside its
// workspace and one inside, itself, then becomes a child dshd on script
// with its state in state: what a third-party agent writing its own
// files does.
func agentWrapper(exe, script, state string) string {
	return "command=/bin/sh,args=-c 'echo out > \"$OUTSIDE/outside.txt\"; echo in > inside.txt; exec " + exe +
		" serve --mode yolo --model scripted:" + script + " --state-dir " + state + "'"
}

// delegateToWrapper runs one dshd prompt in ws whose model delegates to
// the wrapper agent bound as tool, and checks that the child completed
// its turn (so it could write its journal), wrote inside.txt in the
// workspace, and wrote outside.txt in outside exactly when wantOutside.
func delegateToWrapper(t *testing.T, tool string, env []string, ws, outside string, wantOutside bool, args ...string) {
	t.Helper()
	if result, stderr := delegateOnce(t, tool, env, ws, args...); !strings.Contains(result, "child says:") {
		t.Fatalf("the child's turn did not complete: %q; stderr:\n%s", result, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("the agent could not write in the workspace: %v", err)
	}
	_, err := os.Stat(filepath.Join(outside, "outside.txt"))
	if got := err == nil; got != wantOutside {
		t.Errorf("outside.txt written = %v, want %v", got, wantOutside)
	}
}

func TestAnACPChildProcessRunsInTheSandboxItsBindingAsksFor(t *testing.T) {
	needSandbox(t)
	exe, script := scriptedChild(t)
	for _, tc := range []struct {
		name    string
		extra   string
		outside bool
	}{
		{"no sandbox key: unconfined, as before", "", true},
		{"sandbox=off", ",sandbox=off", true},
		{"sandbox=workspace-write with its state dir writable", ",sandbox=workspace-write,writable=STATE", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside, state := t.TempDir(), t.TempDir(), t.TempDir()
			binding := "subagent_acp=acp," + agentWrapper(exe, script, state) + ",env=OUTSIDE=" + outside + strings.ReplaceAll(tc.extra, "STATE", state)
			delegateToWrapper(t, "subagent_acp", nil, ws, outside, tc.outside, "--subagent", binding)
		})
	}
}

func TestABadChildSandboxSettingStopsDshdAtStart(t *testing.T) {
	cases := []mistake{
		{name: "an unknown sandbox mode in a binding", args: []string{"--subagent", "x=acp,command=claude-agent-acp,sandbox=strict"},
			want: []string{`--subagent "x=acp,command=claude-agent-acp,sandbox=strict"`, `sandbox "strict"`, "workspace-write, read-only or off"}},
		{name: "a relative writable dir in a binding", args: []string{"--subagent", "x=acp,command=claude-agent-acp,sandbox=workspace-write,writable=.claude"},
			want: []string{`--subagent "x=acp,command=claude-agent-acp,sandbox=workspace-write,writable=.claude"`, "writable", `".claude" is not an absolute path`}},
		{name: "writable without a sandbox", args: []string{"--subagent", "x=acp,command=codex-acp,writable=/var/lib/codex"},
			want: []string{"writable", "need a sandbox"}},
		{name: "an unknown sandbox mode in a named agent", file: `{"agents": {"claude": {"command": "claude-agent-acp", "sandbox": "strict"}}}`,
			want: []string{"agents.claude", `sandbox "strict"`}},
		{name: "a relative writable dir in a named agent", file: `{"agents": {"claude": {"command": "claude-agent-acp", "sandbox": "read-only", "writable": ["~/.claude"]}}}`,
			want: []string{"agents.claude", `"~/.claude" is not an absolute path`}},
	}
	runServeMistakes(t, cases)
}

func TestAChildDshdRunsInItsParentsSandboxByDefault(t *testing.T) {
	needSandbox(t)
	if noNewPrivs(t, os.Getpid()) {
		t.Skip("this test process already runs with no_new_privs, which the sandbox's mark is")
	}
	exe := testkit.Executable(t)
	for _, tc := range []struct {
		name     string
		parent   []string
		confined bool
	}{
		{"the parent's default sandbox", nil, true},
		{"no sandbox when the parent's is off", []string{"--sandbox", "off"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			// The child hangs in its turn, so it can be looked at; its
			// script's path finds it among the processes.
			script := testkit.Write(t, t.TempDir(), "hang.json", `{"rules": [{"text": "working", "hang": true}]}`)
			srv := fakeModel(t)
			srv.Handle(func(r *openaitest.Request) openaitest.Reply {
				return subagentCall("call_1", "subagent_acp", "hang here")
			})
			// The binding names this binary: a child dshd, with its state
			// dir from its arguments.
			binding := "subagent_acp=acp,command=" + exe + ",args=serve --mode yolo --model scripted:" + script + " --state-dir " + t.TempDir()
			args := append([]string{"--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(),
				"--mode", "yolo", "--subagent", binding}, tc.parent...)
			p := start(t, opts{}, args...)
			w := stdioWire(p)
			sid := w.openSession(ctx, t.TempDir())
			w.promptAsync(sid, "delegate")
			pid := waitProcess(ctx, t, "scripted:"+script)
			if got := noNewPrivs(t, pid); got != tc.confined {
				t.Fatalf("the child dshd (pid %d) runs confined = %v, want %v%s", pid, got, tc.confined, w.stderrTail())
			}
			w.notify("session/cancel", map[string]any{"sessionId": sid})
		})
	}
}

// waitProcess waits for a process with arg among its arguments (not the
// sandbox helper, whose arguments hold the command's too) and returns its
// pid. There is no event for another process's start, so it
// looks at the process table until one appears or ctx ends.
func waitProcess(ctx context.Context, t *testing.T, arg string) int {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
			if err == nil && strings.Contains(string(b), "\x00"+arg+"\x00") && !strings.Contains(string(b), "\x00sandbox\x00") {
				return pid
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no process with %q in its command line appeared", arg)
		case <-tick.C:
		}
	}
}

// noNewPrivs reports whether pid runs with no_new_privs, which the
// sandbox helper sets before it applies Landlock.
func noNewPrivs(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	t.Fatalf("no NoNewPrivs line in /proc/%d/status", pid)
	return false
}
