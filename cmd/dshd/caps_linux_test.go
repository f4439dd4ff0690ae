// End-to-end tests of what a command and a stdio MCP server keep when dshd
// runs as root (CI, containers): uid 0 but no capability, no way into
// dshd's environment through /proc, and a hostname of their own.

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// capsProbe is a script that prints the capability sets it holds, what it
// reads of dshd's /proc/PID/environ, and whether hostname could rename
// the machine.
func capsProbe(t *testing.T, dshd int) string {
	t.Helper()
	hostname, err := exec.LookPath("hostname")
	if err != nil {
		t.Skip("no hostname program to try renaming the machine with")
	}
	return fmt.Sprintf(`grep ^Cap /proc/self/status
echo "--environ of dshd:"; tr '\0' '\n' < /proc/%d/environ 2>&1
echo "--hostname:"; %s dshd-probe-renamed 2>&1; echo "hostname exit $?"`, dshd, hostname)
}

// checkProbe checks what capsProbe printed, and that the machine kept its
// name (putting it back if not, before failing).
func checkProbe(t *testing.T, who, out, hostBefore string, secrets ...string) {
	t.Helper()
	if hostAfter, _ := os.Hostname(); hostAfter != hostBefore {
		if err := setHostname(hostBefore); err != nil {
			t.Errorf("putting the hostname back: %v", err)
		}
		t.Fatalf("%s renamed the machine from %q to %q:\n%s", who, hostBefore, hostAfter, out)
	}
	if !strings.Contains(out, "--environ of dshd:") || !strings.Contains(out, "hostname exit") {
		t.Fatalf("%s did not run the whole probe:\n%s", who, out)
	}
	for _, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Errorf("%s read %q from dshd's environment:\n%s", who, secret, out)
		}
	}
	for _, set := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"} {
		if !strings.Contains(out, set+":\t0000000000000000") {
			t.Errorf("%s holds capabilities (%s):\n%s", who, set, out)
		}
	}
	if strings.Contains(out, "hostname exit 0") {
		t.Errorf("%s set a hostname:\n%s", who, out)
	}
}

func setHostname(name string) error {
	return os.WriteFile("/proc/sys/kernel/hostname", []byte(name), 0o644)
}

func TestARootCommandAndMCPServerGetNoCapabilityNorDshdsSecretsNorTheMachinesName(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("what a command keeps of root's powers needs dshd run as root")
	}
	const token, key = "tok-caps-0123456789abcdef", "k-caps-live-0123456789"
	hostBefore, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeModel(t)
	srv.RequireAPIKey(key)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("done")
		}
		// The prompt is "probe PID SCRIPT".
		_, script, _ := strings.Cut(strings.TrimPrefix(r.Chat.LastUserText(), "probe "), " ")
		return runCommandCall("call_1", script)
	})
	ctx := testkit.Context(t)
	p := start(t, opts{env: []string{"DSHD_TOKEN=" + token, "E2E_MODEL_KEY=" + key}},
		"serve", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "E2E_MODEL_KEY", "--state-dir", t.TempDir(), "--mode", "yolo")
	c := stdioWire(p)
	c.initialize(ctx, nil)
	probe := capsProbe(t, p.cmd.Process.Pid)

	t.Run("a command", func(t *testing.T) {
		sid := c.newSession(ctx, t.TempDir())
		if stop := c.prompt(ctx, sid, "probe "+strconv.Itoa(p.cmd.Process.Pid)+" "+probe); stop != "end_turn" {
			t.Fatalf("stop reason %q; stderr:\n%s", stop, p.stderr)
		}
		results := toolResults(srv)
		if len(results) != 1 {
			t.Fatalf("tool results: %q", results)
		}
		checkProbe(t, "the command", results[0], hostBefore, token, key)
	})

	t.Run("a stdio MCP server", func(t *testing.T) {
		ws := t.TempDir()
		report := filepath.Join(ws, "report.txt")
		server := map[string]any{"name": "probe", "command": "/bin/sh", "env": []any{},
			"args": []any{"-c", "{ " + probe + "\n} > " + report + " 2>&1; echo probed >&2; exit 1"}}
		var res newResult
		c.call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{server}}, &res)
		// The server exits after its probe: dshd warns that it failed.
		c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(dump(ns), `MCP server \"probe\"`) })
		out, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		checkProbe(t, "the MCP server", string(out), hostBefore, token, key)
	})
	p.stop(t)
}
