//go:build linux

package acpprovider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
	"github.com/dshd/dshd/tools/sandbox"
)

// needLandlock skips a test on a kernel that cannot confine a child.
func needLandlock(t testing.TB) {
	t.Helper()
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 2 {
		t.Skipf("this kernel has no Landlock ABI 2 (Linux 5.19+ with the landlock LSM): %v (ABI %d)", err, v)
	}
}

// sandboxedProvider is a provider whose children's sandboxes derive from
// base, run by the test's dshd as the helper (the test binary has no
// `sandbox` command).
func sandboxedProvider(t testing.TB, base sandbox.Config) *acpprovider.Provider {
	t.Helper()
	base.Helper = []string{dshdBin, "sandbox"}
	if base.Caches == nil {
		base.Caches = []string{}
	}
	return newProvider(t, &acpprovider.Options{Sandbox: &base, StateDirOf: stateDirOfArgsOrEnv})
}

// stateDirOfArgsOrEnv stands in for the daemon's rule of a child dshd's
// state dir ([acpprovider.Options.StateDirOf]), which this package cannot
// import: the last --state-dir among args, else DSHD_STATE_DIR. The whole
// rule (the config file, $XDG_STATE_HOME) is cmd/dshd's and is tested
// there.
func stateDirOfArgsOrEnv(args []string, lookupEnv func(string) (string, bool), _ string) (string, error) {
	dir := ""
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--state-dir="); ok {
			dir = v
		} else if a == "--state-dir" && i+1 < len(args) {
			dir = args[i+1]
		}
	}
	if dir == "" {
		dir, _ = lookupEnv("DSHD_STATE_DIR")
	}
	return dir, nil
}

// withOpts is binding plus more options.
func withOpts(binding map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		binding[kv[i]] = kv[i+1]
	}
	return binding
}

func TestSandbox_AConfinedAgentWritesOnlyWhereItsBindingLetsIt(t *testing.T) {
	needLandlock(t)
	p := sandboxedProvider(t, sandbox.Config{})
	cases := []struct {
		name string
		opts []string // the sandbox keys; the writable dir is "OWN"
		// wants: the workspace, an additional directory, the agent's own
		// dir and a dir elsewhere
		inside, extra, own, outside bool
	}{
		{"no sandbox key runs it unconfined, as before", nil, true, true, true, true},
		{"sandbox=off runs it unconfined", []string{"sandbox", "off"}, true, true, true, true},
		{"workspace-write keeps it in the workspace", []string{"sandbox", "workspace-write"}, true, true, false, false},
		{"a bare sandbox key is workspace-write", []string{"sandbox", ""}, true, true, false, false},
		{"writable adds the agent's own directory", []string{"sandbox", "workspace-write", "writable", "OWN"}, true, true, true, false},
		{"read-only keeps the workspace unchanged but writes its own dir", []string{"sandbox", "read-only", "writable", "OWN"}, false, false, true, false},
		// The agent could not make it itself: its parent is not writable.
		{"a writable dir that does not exist yet is made", []string{"sandbox", "workspace-write", "writable", "OWN/new/state"}, true, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			own, elsewhere, extraDir := t.TempDir(), t.TempDir(), t.TempDir()
			parent := newParent(t, parentOpts{})
			parent.Scope.AdditionalDirectories = []string{extraDir}
			opts := make([]string, len(tc.opts))
			for i, o := range tc.opts {
				opts[i] = strings.ReplaceAll(o, "OWN", own)
			}
			if strings.Contains(strings.Join(opts, " "), "/new/state") {
				own = filepath.Join(own, "new", "state")
			}
			paths := []string{
				filepath.Join(parent.Scope.Cwd, "inside.txt"),
				filepath.Join(extraDir, "extra.txt"),
				filepath.Join(own, "own.txt"),
				filepath.Join(elsewhere, "outside.txt"),
			}
			run := start(t, p, subagents.StartRequest{
				Prompt:  "touch " + strings.Join(paths, " "),
				Parent:  parent.Scope,
				Options: withOpts(fakeBinding(modeAgent), opts...),
			})
			res := wait(t, run)
			if res.StopReason != subagents.StopCompleted {
				t.Fatalf("result = %+v", res)
			}
			for i, want := range []bool{tc.inside, tc.extra, tc.own, tc.outside} {
				_, err := os.Stat(paths[i])
				if got := err == nil; got != want {
					t.Errorf("%s written = %v, want %v; the agent said:\n%s", paths[i], got, want, res.Output)
				}
				if !want && !strings.Contains(res.Output, paths[i]+": open "+paths[i]+": permission denied") {
					t.Errorf("the agent's write to %s did not fail for permission:\n%s", paths[i], res.Output)
				}
			}
		})
	}
}

func TestSandbox_NetworkFalseLeavesTheAgentOnlyItsOwnLoopback(t *testing.T) {
	needLandlock(t)
	l := testkit.Loopback(t)
	p := sandboxedProvider(t, sandbox.Config{})
	for _, tc := range []struct {
		network string
		want    string
	}{
		{"true", "connected"},
		{"false", "dial: "},
	} {
		t.Run("network="+tc.network, func(t *testing.T) {
			run, _ := startWatched(t, p, withOpts(fakeBinding(modeAgent), "sandbox", "workspace-write", "network", tc.network), "dial "+l.Addr().String())
			res := wait(t, run)
			if res.StopReason != subagents.StopCompleted || !strings.HasPrefix(res.Output, tc.want) {
				t.Fatalf("result = %+v, want output %q…", res, tc.want)
			}
		})
	}
}

// childDshd runs the test's dshd on sandboxed.json with its own command
// sandbox off, so that only the sandbox of the child process confines
// what its commands write; OUTSIDE names the directory outside the
// workspace it tries.
func childDshd(t *testing.T, outside string, extra ...string) map[string]string {
	b := dshdBinding(t, "sandboxed.json", "--sandbox", "off")
	b["env"] = quote("OUTSIDE=" + outside)
	return withOpts(b, extra...)
}

func TestSandbox_AChildDshdRunsInTheDaemonsSandboxAndCompletesItsTurn(t *testing.T) {
	needLandlock(t)
	cases := []struct {
		name    string
		base    sandbox.Mode
		opts    []string
		outside bool
		// freshState gives the child a state dir that does not exist yet,
		// which it could not make in its sandbox.
		freshState bool
		// envState names the child's state dir in its environment only.
		envState bool
	}{
		{"by default in the daemon's workspace-write sandbox", sandbox.WorkspaceWrite, nil, false, false, false},
		{"unconfined with sandbox=off", sandbox.WorkspaceWrite, []string{"sandbox", "off"}, true, false, false},
		{"unconfined when the daemon's sandbox is off", sandbox.Off, nil, true, false, false},
		{"in a sandbox its binding asks for when the daemon's is off", sandbox.Off, []string{"sandbox", "workspace-write"}, false, false, false},
		{"with a state dir that does not exist yet", sandbox.WorkspaceWrite, nil, false, true, false},
		{"with its state dir only in its environment", sandbox.WorkspaceWrite, nil, false, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := sandboxedProvider(t, sandbox.Config{Mode: tc.base})
			outside := t.TempDir()
			parent := newParent(t, parentOpts{gate: &recGate{}})
			binding := childDshd(t, outside, tc.opts...)
			switch {
			case tc.freshState:
				binding["args"] = quote(dshdArgs(t, "sandboxed.json", "--sandbox", "off", "--state-dir", filepath.Join(t.TempDir(), "new", "state"))...)
			case tc.envState:
				binding["args"] = quote("serve", "--model", "scripted:"+testdata(t, "sandboxed.json"), "--mode", "ask", "--sandbox", "off")
				binding["env"] += " " + quote("DSHD_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
			}
			run := start(t, p, subagents.StartRequest{Prompt: "write both files", Parent: parent.Scope, Options: binding})
			res := wait(t, run)
			// The child's journal is in its state dir: the turn completing
			// shows the child could write it.
			if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, "Result:") || !strings.Contains(res.Output, "done") {
				t.Fatalf("result = %+v", res)
			}
			if _, err := os.Stat(filepath.Join(parent.Scope.Cwd, "inside.txt")); err != nil {
				t.Errorf("the child's command could not write in the workspace: %v\n%s", err, res.Output)
			}
			_, err := os.Stat(filepath.Join(outside, "outside.txt"))
			if got := err == nil; got != tc.outside {
				t.Errorf("outside.txt written = %v, want %v; the child said:\n%s", got, tc.outside, res.Output)
			}
			if !tc.outside && !strings.Contains(res.Output, "outside-refused") {
				t.Errorf("the refused write is not in the child's answer:\n%s", res.Output)
			}
		})
	}
}

func TestSandbox_ABadValueIsAnErrorNamingTheKey(t *testing.T) {
	p := newProvider(t, nil)
	cases := []struct {
		name string
		opts map[string]string
		want []string
	}{
		{"an unknown mode", map[string]string{"command": "agent", "sandbox": "strict"}, []string{`sandbox "strict"`, "workspace-write, read-only or off"}},
		{"a relative writable dir", map[string]string{"command": "agent", "sandbox": "workspace-write", "writable": "state/dir"}, []string{"writable", `"state/dir" is not an absolute path`}},
		{"an unterminated quote in writable", map[string]string{"command": "agent", "sandbox": "read-only", "writable": "'/a"}, []string{"writable", "unterminated"}},
		{"a network value that is no boolean", map[string]string{"command": "agent", "sandbox": "workspace-write", "network": "maybe"}, []string{"network", `"maybe"`}},
		{"writable without a sandbox", map[string]string{"command": "agent", "writable": "/var/lib/agent"}, []string{"writable", "need a sandbox", "sandbox=workspace-write"}},
		{"writable with sandbox=off", map[string]string{"command": "agent", "sandbox": "off", "writable": "/var/lib/agent"}, []string{"sandbox=off"}},
		{"a sandbox for an agent on a socket", map[string]string{"address": "unix:/run/agent.sock", "sandbox": "workspace-write"}, []string{"sandbox=", "unix:/run/agent.sock", "runs elsewhere"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.CheckOptions(tc.opts)
			if err == nil {
				t.Fatal("CheckOptions accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q: %v", w, err)
				}
			}
		})
	}
	t.Run("a named agent's sandbox settings are checked too", func(t *testing.T) {
		p := newProvider(t, &acpprovider.Options{Agents: map[string]acpprovider.AgentConfig{
			"claude": {Command: "claude-agent-acp", Sandbox: "workspace-write", Writable: []string{"~/.claude"}},
		}})
		err := p.CheckOptions(map[string]string{"agent": "claude"})
		if err == nil || !strings.Contains(err.Error(), `writable: "~/.claude" is not an absolute path`) {
			t.Fatalf("CheckOptions = %v", err)
		}
	})
	t.Run("good values pass", func(t *testing.T) {
		for _, opts := range []map[string]string{
			{"command": "agent", "sandbox": "workspace-write", "writable": "/var/lib/agent '/opt/agent state'", "network": "false"},
			{"command": "agent", "sandbox": "read-only", "network": ""},
			{"command": "agent", "sandbox": "off"},
		} {
			if err := p.CheckOptions(opts); err != nil {
				t.Errorf("CheckOptions(%v) = %v", opts, err)
			}
		}
	})
}

func TestSandbox_AnAgentTheSandboxCannotStartEndsTheRunSayingWhy(t *testing.T) {
	needLandlock(t)
	p := sandboxedProvider(t, sandbox.Config{})
	run, _ := startWatched(t, p, map[string]string{"command": "no-such-agent-acp", "sandbox": "workspace-write"}, "hello")
	wantError(t, wait(t, run), "no-such-agent-acp", "could not be started", "executable file not found")
}

func TestSandbox_ARefusedAgentIsToldItsOwnSettingNotTheCommands(t *testing.T) {
	// A helper that cannot start: the sandbox cannot confine, as on a
	// kernel without Landlock, and the fallback refuses.
	p := newProvider(t, &acpprovider.Options{Sandbox: &sandbox.Config{
		Helper:   []string{filepath.Join(t.TempDir(), "no-such-helper")},
		Fallback: sandbox.Refuse,
	}})
	run, _ := startWatched(t, p, withOpts(fakeBinding(modeAgent), "sandbox", "workspace-write"), "hello")
	res := wait(t, run)
	wantError(t, res, "to run child agents unconfined", "sandbox=off on the agent's binding", "--sandbox-fallback unconfined")
	if strings.Contains(res.Diagnostic, "--sandbox off") || strings.Contains(res.Diagnostic, "commands") {
		t.Errorf("the refusal points at the command settings: %s", res.Diagnostic)
	}
}
