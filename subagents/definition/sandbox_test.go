package definition_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// loadOne reads the one definition of name in the workspace ws (scope
// workspace) or in the user's config dir ws (scope user), and holds it
// to the daemon's providers.
func loadOne(t *testing.T, ws string, scope definition.Scope, name, text string) (*definition.Definition, *definition.Error) {
	t.Helper()
	sources := definition.WorkspaceSources(ws)
	if scope == definition.ScopeUser {
		sources = definition.UserSources(ws)
	}
	testkit.Write(t, sources[0].Dir, name, text)
	defs, errs := definition.Load(sources)
	if len(errs) == 0 {
		d := newDaemon(t)
		defs, errs = definition.CheckAll(defs, definition.Env{Service: d.svc, Tools: d.base.Names()})
	}
	switch {
	case len(errs) > 1:
		t.Fatalf("errors %v", errs)
	case len(errs) == 1:
		return nil, errs[0]
	case len(defs) != 1:
		t.Fatalf("definitions %v", defs)
	}
	return defs[0], nil
}

func TestSandbox_TheKeysOfAnAcpDefinitionBecomeItsBindingOptions(t *testing.T) {
	d, err := loadOne(t, t.TempDir(), definition.ScopeUser, "codex.md", `---
description: Runs a task in Codex.
provider: acp
command: codex-acp
sandbox: read-only
writable: [/var/lib/codex, "/opt/my state"]
network: false
---
`)
	if err != nil {
		t.Fatal(err)
	}
	o := d.Binding.Options
	if o["sandbox"] != "read-only" || o["writable"] != "/var/lib/codex '/opt/my state'" || o["network"] != "false" {
		t.Fatalf("options = %v", o)
	}
}

func TestSandbox_AWorkspaceDefinitionsCommandRunsConfinedAndTheUsersAsBefore(t *testing.T) {
	self := testkit.Executable(t)
	for _, tc := range []struct {
		name  string
		scope definition.Scope
		keys  string
		want  string
	}{
		{"a workspace command", definition.ScopeWorkspace, "command: codex-acp\n", "workspace-write"},
		{"a workspace command that asks for read-only", definition.ScopeWorkspace, "command: codex-acp\nsandbox: read-only\n", "read-only"},
		{"a workspace command without the network", definition.ScopeWorkspace, "command: codex-acp\nnetwork: false\n", "workspace-write"},
		{"the user's command", definition.ScopeUser, "command: codex-acp\n", ""},
		{"the user's command, unconfined by name", definition.ScopeUser, "command: codex-acp\nsandbox: off\n", "off"},
		{"a workspace agent naming the config file's agent", definition.ScopeWorkspace, "agent: codex\n", ""},
		{"a workspace agent with another command", definition.ScopeWorkspace, "agent: codex\ncommand: evil-acp\n", "workspace-write"},
		{"a workspace child dshd by default", definition.ScopeWorkspace, "", ""},
		{"a workspace child dshd by name", definition.ScopeWorkspace, "command: " + self + "\nargs: [serve]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadOne(t, t.TempDir(), tc.scope, "x.md", "---\ndescription: d\nprovider: acp\n"+tc.keys+"---\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Binding.Options["sandbox"]; got != tc.want {
				t.Fatalf("sandbox = %q, want %q (options %v)", got, tc.want, d.Binding.Options)
			}
		})
	}
}

func TestSandbox_AWorkspaceDefinitionMayWriteInItsWorkspace(t *testing.T) {
	ws := t.TempDir()
	inside := filepath.Join(ws, "build")
	d, err := loadOne(t, ws, definition.ScopeWorkspace, "x.md", "---\ndescription: d\nprovider: acp\ncommand: codex-acp\nwritable: "+inside+"\n---\n")
	if err != nil {
		t.Fatal(err)
	}
	if o := d.Binding.Options; o["writable"] != inside || o["sandbox"] != "workspace-write" {
		t.Fatalf("options = %v", o)
	}
}

func TestSandbox_MistakesAreReportedWithTheFileLineAndKey(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		scope definition.Scope
		keys  string
		key   string
		line  int
		want  []string
	}{
		{"sandbox on another provider", definition.ScopeUser, "provider: spawn\nsandbox: read-only\n", "sandbox", 4,
			[]string{"only the acp provider takes sandbox (this definition's provider is spawn)"}},
		{"writable on another provider", definition.ScopeUser, "writable: [/tmp]\n", "writable", 3,
			[]string{"only the acp provider takes writable (this definition's provider is spawn)"}},
		{"network on another provider", definition.ScopeUser, "provider: fork\nnetwork: false\n", "network", 4,
			[]string{"only the acp provider takes network (this definition's provider is fork)"}},
		{"an unknown sandbox mode", definition.ScopeUser, "provider: acp\ncommand: codex-acp\nsandbox: strict\n", "sandbox", 5,
			[]string{`sandbox: "strict": want workspace-write, read-only or off`}},
		{"network that is no bool", definition.ScopeUser, "provider: acp\ncommand: codex-acp\nsandbox: read-only\nnetwork: maybe\n", "network", 6,
			[]string{"want true or false"}},
		{"a relative writable dir", definition.ScopeUser, "provider: acp\ncommand: codex-acp\nsandbox: read-only\nwritable: .codex\n", "writable", 6,
			[]string{`".codex" is not an absolute path`}},
		{"writable without a sandbox", definition.ScopeUser, "provider: acp\ncommand: codex-acp\nwritable: [/var/lib/codex]\n", "writable", 5,
			[]string{"need a sandbox"}},
		{"a workspace definition unconfined", definition.ScopeWorkspace, "provider: acp\ncommand: codex-acp\nsandbox: off\n", "sandbox", 5,
			[]string{"a workspace definition cannot run its agent unconfined", "$XDG_CONFIG_HOME/dshd/agents", "agents entry"}},
		{"a workspace definition writing outside its workspace", definition.ScopeWorkspace, "provider: acp\ncommand: codex-acp\nwritable: [" + outside + "]\n", "writable", 5,
			[]string{outside + " is outside the workspace", "$XDG_CONFIG_HOME/dshd/agents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadOne(t, t.TempDir(), tc.scope, "x.md", "---\ndescription: d\n"+tc.keys+"---\n")
			if err == nil {
				t.Fatalf("accepted: options %v", d.Binding.Options)
			}
			if err.Key != tc.key || err.Line != tc.line {
				t.Errorf("key %q line %d, want %q line %d: %v", err.Key, err.Line, tc.key, tc.line, err)
			}
			msg := err.Error()
			if strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, err.File+":") {
				t.Errorf("not one line naming the file: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}

// refusedInTheWorkspaceOnly loads text as a workspace definition, which
// must be refused, and as the user's, which may do what it asks; it
// returns the workspace's refusal.
func refusedInTheWorkspaceOnly(t *testing.T, text string) *definition.Error {
	t.Helper()
	d, derr := loadOne(t, t.TempDir(), definition.ScopeWorkspace, "x.md", text)
	if derr == nil {
		t.Fatalf("accepted: options %v", d.Binding.Options)
	}
	if _, uerr := loadOne(t, t.TempDir(), definition.ScopeUser, "x.md", text); uerr != nil {
		t.Errorf("the user's definition was refused: %v", uerr)
	}
	return derr
}

func TestSandbox_AWorkspaceChildDshdCannotLoosenItsSandboxThroughItsArgs(t *testing.T) {
	self := testkit.Executable(t)
	for _, args := range []string{"[serve, --sandbox, \"off\"]", "[serve, --sandbox=off]", "[serve, --sandbox-writable, /home]",
		"[serve, --sandbox-fallback=unconfined]", "[serve, --mcp-sandbox, \"off\"]", "[serve, --state-dir, /root/.ssh]",
		// A config file can set all of these, the state dir included.
		"[serve, --config, .dshd/child.json]", "[serve, --config=/tmp/child.json]"} {
		t.Run(args, func(t *testing.T) {
			text := "---\ndescription: d\nprovider: acp\ncommand: " + self + "\nargs: " + args + "\n---\n"
			derr := refusedInTheWorkspaceOnly(t, text)
			if derr.Key != "args" || derr.Line != 5 {
				t.Errorf("key %q line %d, want args line 5: %v", derr.Key, derr.Line, derr)
			}
			for _, w := range []string{"a workspace definition cannot pass --", "$XDG_CONFIG_HOME/dshd/agents"} {
				if !strings.Contains(derr.Error(), w) {
					t.Errorf("%q lacks %q", derr.Error(), w)
				}
			}
		})
	}
}

func TestSandbox_AWorkspaceDefinitionCannotLoosenANamedChildDshdThroughItsArgs(t *testing.T) {
	for _, agent := range []string{"kid", "kid-by-name"} {
		for _, args := range []string{"[serve, --state-dir, /root/.ssh]", "[serve, --sandbox=off]", "[serve, --config, /tmp/child.json]"} {
			t.Run(agent+" "+args, func(t *testing.T) {
				text := "---\ndescription: d\nprovider: acp\nagent: " + agent + "\nargs: " + args + "\n---\n"
				derr := refusedInTheWorkspaceOnly(t, text)
				if derr.Key != "args" || derr.Line != 5 {
					t.Errorf("key %q line %d, want args line 5: %v", derr.Key, derr.Line, derr)
				}
				msg := derr.Error()
				for _, w := range []string{derr.File + ":5:", "a workspace definition cannot pass --", "the agent " + agent + " of the config file runs one", "$XDG_CONFIG_HOME/dshd/agents"} {
					if !strings.Contains(msg, w) {
						t.Errorf("%q lacks %q", msg, w)
					}
				}
			})
		}
	}
	for _, agent := range []string{"codex", "kid-off"} {
		t.Run("any args to "+agent+", which runs unconfined", func(t *testing.T) {
			text := "---\ndescription: d\nprovider: acp\nagent: " + agent + "\nargs: [-c, 'rm -rf ~']\n---\n"
			derr := refusedInTheWorkspaceOnly(t, text)
			if derr.Key != "args" || derr.Line != 5 || !strings.Contains(derr.Error(), "the agent "+agent+" of the config file runs unconfined") {
				t.Errorf("key %q line %d: %v", derr.Key, derr.Line, derr)
			}
		})
	}
	t.Run("args to a sandboxed third-party agent, and harmless args to a child dshd, pass", func(t *testing.T) {
		for _, keys := range []string{"agent: claude\nargs: [--state-dir, /root/.ssh]\n", "agent: kid\nargs: [serve, --model, scripted]\n"} {
			if d, err := loadOne(t, t.TempDir(), definition.ScopeWorkspace, "x.md", "---\ndescription: d\nprovider: acp\n"+keys+"---\n"); err != nil {
				t.Errorf("%s: %v", keys, err)
			} else if d.Binding.Options["args"] == "" {
				t.Errorf("%s: options %v", keys, d.Binding.Options)
			}
		}
	})
}

// A definition has no environment to give its agent, so none of the
// variables that move a child dshd's state dir or sandbox
// (DSHD_STATE_DIR, XDG_STATE_HOME, DSHD_SANDBOX, DSHD_CONFIG, ...) can
// come from a workspace's file: an env key is a mistake.
func TestSandbox_AWorkspaceDefinitionHasNoEnvironmentToSet(t *testing.T) {
	for _, dir := range []string{".dshd/agents", ".claude/agents"} {
		t.Run(dir, func(t *testing.T) {
			ws := t.TempDir()
			testkit.Write(t, filepath.Join(ws, dir), "x.md", "---\ndescription: d\nprovider: acp\nagent: kid\nenv:\n  DSHD_STATE_DIR: /root/.ssh\n---\n")
			defs, errs := definition.Load(definition.WorkspaceSources(ws))
			if len(errs) != 1 || errs[0].Key != "env" || errs[0].Line != 5 {
				t.Fatalf("definitions %v, errors %v; want env at line 5 refused", defs, errs)
			}
		})
	}
}
