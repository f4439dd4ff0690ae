package definition_test

import (
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/subagent"
)

// daemon is what a dshd has before any session: the three providers, the
// built-in tools and the default bindings.
type daemon struct {
	svc  *subagents.Service
	base *tools.Registry
}

func newDaemon(t testing.TB) *daemon {
	t.Helper()
	svc := subagents.NewService(nil)
	self := testkit.Executable(t)
	// codex is a third-party agent, unconfined, and claude one in a
	// sandbox; kid is a child dshd by default (no command), kid-by-name
	// one whose command is this program; both run in the daemon's
	// workspace-write sandbox, and kid-off unconfined.
	acp, err := acpprovider.New(&acpprovider.Options{
		Agents: map[string]acpprovider.AgentConfig{
			"codex":       {Command: "codex-acp"},
			"claude":      {Command: "claude-agent-acp", Sandbox: "workspace-write"},
			"kid":         {},
			"kid-by-name": {Command: self, Args: []string{"serve"}},
			"kid-off":     {Sandbox: "off"},
		},
		Sandbox: &sandbox.Config{Mode: sandbox.WorkspaceWrite},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acp.Close() })
	for _, p := range []subagents.Provider{spawn.New(nil), fork.New(nil), acp} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	base := tools.NewRegistry(nil)
	for _, tl := range builtin.Builtins(nil) {
		if _, err := base.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range subagent.DefaultBindings() {
		dispose, err := subagent.Bind(svc, base, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	return &daemon{svc: svc, base: base}
}
