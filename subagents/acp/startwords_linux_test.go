package acpprovider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpprovider "github.com/dshd/dshd/subagents/acp"
	"github.com/dshd/dshd/tools/sandbox"
)

// mkdirAgent is a third-party agent that makes its state dir, state, at
// start, as agents do, and exits when it cannot.
func mkdirAgent(state string) acpprovider.AgentConfig {
	return acpprovider.AgentConfig{Command: "/bin/sh", Args: []string{"-c", `mkdir "$STATE"`}, Env: map[string]string{"STATE": state}}
}

// mkdirBinding is mkdirAgent as a binding's own command, with more
// options.
func mkdirBinding(state string, kv ...string) map[string]string {
	a := mkdirAgent(state)
	return withOpts(map[string]string{"command": a.Command, "args": quote(a.Args...), "env": quote("STATE=" + state)}, kv...)
}

func TestSandbox_AnAgentThatDiesInItsSandboxSaysWhereItRanWhatWasRefusedAndWhatWouldAllowIt(t *testing.T) {
	needLandlock(t)
	// Short: a test's temp dir has a name long enough to look like a
	// credential, which diagnostics hide.
	outside, err := os.MkdirTemp("", "acp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	state := filepath.Join(outside, "state")
	cases := []struct {
		name    string
		base    sandbox.Mode
		agents  map[string]acpprovider.AgentConfig
		binding map[string]string
		want    []string
		// notWant would point at another place's settings.
		notWant []string
	}{
		{
			name:    "a binding's own command in workspace-write",
			base:    sandbox.WorkspaceWrite,
			binding: mkdirBinding(state, "sandbox", "workspace-write"),
			want:    []string{"exited with status 1 in its workspace-write sandbox", "Permission denied", "lets it write only in", "`" + state + "`", "writable=", "on its binding", "sandbox=off"},
			notWant: []string{"agents entry", "--sandbox-writable"},
		},
		{
			name:    "a binding's own command in read-only",
			base:    sandbox.WorkspaceWrite,
			binding: mkdirBinding(state, "sandbox", "read-only"),
			want:    []string{"exited with status 1 in its read-only sandbox", "`" + state + "`", "writable=", "on its binding", "sandbox=off"},
			notWant: []string{"workspace-write sandbox", "/‘"},
		},
		{
			name:    "a binding's own command without the network",
			base:    sandbox.WorkspaceWrite,
			binding: map[string]string{"command": "/bin/sh", "args": quote("-c", "echo 'dial tcp: lookup api.example.com: no such host' >&2; exit 1"), "sandbox": "workspace-write", "network": "false"},
			want:    []string{"with no network", "network=true on its binding"},
			notWant: []string{"refused `"},
		},
		{
			name: "an agents entry of the config file",
			base: sandbox.WorkspaceWrite,
			agents: map[string]acpprovider.AgentConfig{"kid": func() acpprovider.AgentConfig {
				a := mkdirAgent(state)
				a.Sandbox = "workspace-write"
				return a
			}()},
			binding: map[string]string{"agent": "kid"},
			want:    []string{"workspace-write sandbox", "`" + state + "`", `"writable"`, `agents entry "kid"`, `"sandbox": "off"`},
		},
		{
			// Its state dir is in XDG_STATE_HOME, which the test's rule
			// of a child dshd's state dir does not read: the child dshd
			// cannot make it in the daemon's sandbox it inherited.
			name:    "a child dshd whose state dir is not known",
			base:    sandbox.WorkspaceWrite,
			binding: map[string]string{"command": dshdBin, "args": quote("serve", "--model", "scripted:"+testdata(t, "echo.json"), "--mode", "ask"), "env": quote("XDG_STATE_HOME=" + outside)},
			want:    []string{"workspace-write sandbox", "`" + filepath.Join(outside, "dshd"), "writable=", "on its binding", "sandbox=off", "--state-dir"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := sandbox.Config{Mode: tc.base, Helper: []string{dshdBin, "sandbox"}, Caches: []string{}}
			p := newProvider(t, &acpprovider.Options{Sandbox: &base, StateDirOf: stateDirOfArgsOrEnv, Agents: tc.agents})
			run, _ := startWatched(t, p, tc.binding, "hello")
			res := wait(t, run)
			t.Logf("the diagnostic: %s", res.Diagnostic)
			wantError(t, res, "could not be started")
			for _, w := range tc.want {
				if !strings.Contains(res.Diagnostic, w) {
					t.Errorf("the diagnostic does not say %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.Diagnostic, w) {
					t.Errorf("the diagnostic says %q", w)
				}
			}
		})
	}
	t.Run("nothing about a sandbox for an agent that ran unconfined", func(t *testing.T) {
		p := newProvider(t, &acpprovider.Options{Sandbox: &sandbox.Config{Helper: []string{dshdBin, "sandbox"}}})
		binding := map[string]string{"command": "/bin/sh", "args": quote("-c", "echo 'open /x/state: permission denied' >&2; exit 1")}
		run, _ := startWatched(t, p, binding, "hello")
		res := wait(t, run)
		wantError(t, res, "could not be started", "permission denied")
		if strings.Contains(res.Diagnostic, "sandbox") {
			t.Errorf("the diagnostic of an unconfined agent speaks of a sandbox: %s", res.Diagnostic)
		}
	})
}
