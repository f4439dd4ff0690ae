// End-to-end tests of the delegation depth limit across dshd processes:
// --max-depth 0 forbids delegation, and a root's limit binds the child
// dshd processes it starts, whatever their own limit.

package main

import (
	"strings"
	"testing"
)

// depthScript delegates down a chain: the root asks its acp child (a
// dshd of its own) for "child task", which asks an in-process subagent
// for "grandchild task". Each level reports the tool result it saw.
const depthScript = `{"rules": [
  {"user": "^delegate", "step": 0, "toolCalls": [{"name": "subagent_acp", "arguments": {"description": "d", "prompt": "child task"}}]},
  {"user": "^child task", "step": 0, "toolCalls": [{"name": "subagent", "arguments": {"description": "g", "prompt": "grandchild task"}}]},
  {"user": "^grandchild task", "text": "grandchild answer"},
  {"user": "^child task", "text": "child saw: {{tool}}"},
  {"user": "^delegate", "text": "root saw: {{tool}}"}
]}`

// runChain runs `dshd prompt delegate` with the root's extra flags; its
// acp child is a default child dshd, which keeps its own default limit.
func runChain(t *testing.T, extra ...string) string {
	t.Helper()
	args := []string{"prompt", "--model", "scripted:" + writeScript(t, depthScript), "--state-dir", t.TempDir(), "--cwd", t.TempDir(),
		"--mode", "yolo", "--subagent", "subagent_acp=acp"}
	code, stdout, stderr := runDshd(t, nil, append(append(args, extra...), "delegate")...)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	return stdout
}

func TestDepth_TheRootsLimitBindsItsChildDshd(t *testing.T) {
	t.Run("without a limit the chain reaches the grandchild", func(t *testing.T) {
		if out := runChain(t); !strings.Contains(out, "grandchild answer") {
			t.Fatalf("stdout %q", out)
		}
	})
	t.Run("under --max-depth 1 the child dshd, whose own limit is 3, is refused the grandchild", func(t *testing.T) {
		out := runChain(t, "--max-depth", "1")
		if strings.Contains(out, "grandchild answer") || !strings.Contains(out, "child saw:") || !strings.Contains(out, "beyond the depth limit of 1") {
			t.Fatalf("stdout %q", out)
		}
	})
	t.Run("--max-depth 0 forbids delegation: no child starts", func(t *testing.T) {
		out := runChain(t, "--max-depth", "0")
		if strings.Contains(out, "child saw:") || !strings.Contains(out, "root saw:") {
			t.Fatalf("stdout %q", out)
		}
	})
}
