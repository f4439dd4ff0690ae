//go:build linux

package acpprovider_test

import (
	"context"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools/sandbox"
)

// BenchmarkTurn_ACPColdSandbox is BenchmarkTurn_ACPCold (a child dshd
// started for every task: process start, handshake, session, turn,
// teardown) with the child process unconfined and in the sandbox a child
// dshd gets by default, with and without the network. Run with
//
//	go test -run '^$' -bench ColdSandbox ./subagents/acp/
func BenchmarkTurn_ACPColdSandbox(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts map[string]string
	}{
		{"off", map[string]string{"sandbox": "off"}},
		{"workspace-write", nil},
		{"workspace-write-no-network", map[string]string{"network": "false"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.name != "off" {
				needLandlock(b)
			}
			p := sandboxedProvider(b, sandbox.Config{Mode: sandbox.WorkspaceWrite})
			parent := st.NewParent(b, st.ParentOptions{})
			binding := benchBinding(b, "echo.json")
			for k, v := range bc.opts {
				binding[k] = v
			}
			req := subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: binding}
			for b.Loop() {
				runOnce(b, "You said: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
			}
		})
	}
}

// BenchmarkTurn_FakeAgentColdSandbox is the same for the test binary's
// fake agent, which writes no state and starts no commands: what the
// sandbox costs any agent's start, apart from a child dshd's own work.
func BenchmarkTurn_FakeAgentColdSandbox(b *testing.B) {
	for _, mode := range []string{"off", "workspace-write"} {
		b.Run(mode, func(b *testing.B) {
			if mode != "off" {
				needLandlock(b)
			}
			p := sandboxedProvider(b, sandbox.Config{})
			parent := st.NewParent(b, st.ParentOptions{})
			req := subagents.StartRequest{Prompt: "echo hi", Parent: parent.Scope, Options: withOpts(fakeBinding(modeAgent), "sandbox", mode)}
			for b.Loop() {
				runOnce(b, "echo: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
			}
		})
	}
}
