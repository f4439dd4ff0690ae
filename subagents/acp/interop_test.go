//go:build unix

package acpprovider_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// interopDir returns node and the conformance/interop directory of the
// third-party agents, or skips when node or the package pkg there (under
// node_modules) is not installed.
func interopDir(t *testing.T, pkg string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "conformance", "interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		t.Skip("conformance/interop/node_modules is not installed (npm ci there)")
	}
	return node, dir
}

// tsEchoAgent returns the binding of the third-party echo agent written
// with the official TypeScript SDK (conformance/interop), or skips.
func tsEchoAgent(t *testing.T, env ...string) map[string]string {
	t.Helper()
	node, dir := interopDir(t, filepath.Join("@agentclientprotocol", "sdk"))
	script := filepath.Join(dir, "echo-agent.mjs")
	if _, err := os.Stat(script); err != nil {
		t.Skip("conformance/interop/echo-agent.mjs is missing")
	}
	opts := map[string]string{"command": node, "args": quote(script)}
	if len(env) > 0 {
		opts["env"] = quote(env...)
	}
	return opts
}

func TestInterop_ATypeScriptSDKAgentAsAChild(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	parent := newParent(t, parentOpts{expose: exp})
	opts := tsEchoAgent(t, "ECHO_CHUNK=4")
	run := start(t, p, subagents.StartRequest{Prompt: "hello from the parent", Parent: parent.Scope, Options: opts})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "hello from the parent" {
		t.Fatalf("result = %+v", res)
	}
	var chunks int
	for _, e := range relayed(t, exp) {
		if e.child == "s_main/sa1" && e.update["sessionUpdate"] == "agent_message_chunk" {
			chunks++
		}
	}
	if chunks != 6 {
		t.Fatalf("%d chunks relayed, want 6", chunks)
	}
	second := resume(t, run, "again")
	if res := wait(t, second); res.Output != "again" {
		t.Fatalf("resumed = %+v", res)
	}
	run.Dispose()
	second.Dispose()
	checkNoAgentIDs(t, exp)
	checkNoProcesses(t)
}
