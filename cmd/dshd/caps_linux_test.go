// End-to-end tests of what a command and a stdio MCP server keep when dshd
// runs as root (CI, containers): uid 0 but no capability, no way into
// dshd's environment through /proc, and a hostname of their own.

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// capsProbe is a script that prints the capability sets it holds, what it
// reads of dshd's /proc/PID/environ, and whether hostname could set the
// hostname: to the one it has, so that a regression renames nothing.
func capsProbe(t *testing.T, dshd int) string {
	t.Helper()
	hostname, err := exec.LookPath("hostname")
	if err != nil {
		t.Skip("no hostname program to try renaming the machine with")
	}
	return fmt.Sprintf(`grep ^Cap /proc/self/status
echo "--environ of dshd:"; tr '\0' '\n' < /proc/%d/environ 2>&1
echo "--hostname:"; %[2]s "$(%[2]s)" 2>&1; echo "hostname exit $?"`, dshd, hostname)
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
		out := mcpProbe(ctx, t, c, probe)
		checkProbe(t, "the MCP server", out, hostBefore, token, key)
	})
	p.stop(t)
}

// capless is argv run as root without any capability, and without
// Landlock: under the sandbox helper given only noCaps.
func capless(t *testing.T, argv ...string) *exec.Cmd {
	// A grace for the command to end on the SIGTERM the helper passes on:
	// with none, the helper's SIGKILL follows at once, and a dshd that
	// stops on SIGTERM (p.stop) is killed when it is not quick enough.
	return exec.Command(testkit.Executable(t), append([]string{"sandbox", `{"noCaps": true, "graceMs": 10000}`, "--"}, argv...)...)
}

// childOf waits for the child of pid running the program named comm (a
// capless helper's command, once it is exec'd).
func childOf(ctx context.Context, t *testing.T, pid int, comm string) int {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for child, p := range testkit.Descendants(t, pid) {
			if p.PPID == pid && p.Comm == comm {
				return child
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("process %d started no %s", pid, comm)
		}
	}
}

// dshd run as root without capabilities (docker run --user 0 --cap-drop
// ALL), past the sandbox (off, or a kernel without Landlock whose fallback
// runs commands unconfined): a process of its uid with no capability
// either passes every ptrace check but one, dshd being non-dumpable.
func TestARootDshdsEnvironmentAndMemoryAreClosedToItsUidWithoutCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dshd makes itself non-dumpable only as root (see README, Security)")
	}
	const token = "tok-dump-0123456789abcdef"
	ctx := testkit.Context(t)
	script := writeScript(t, `{"rules": [{"text": "fine"}]}`)
	p := start(t, opts{env: []string{"DSHD_TOKEN=" + token}, prefix: capless(t).Args},
		"serve", "--model", "scripted:"+script, "--state-dir", t.TempDir())
	c := stdioWire(p)
	c.initialize(ctx, nil) // dshd is up and past its start
	dshd := childOf(ctx, t, p.cmd.Process.Pid, filepath.Base(testkit.Executable(t)))
	// A dumpable process in the same state, as a control: the probe does
	// read what the kernel lets it.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	sibling := capless(t, sleep, "300")
	sibling.Env = []string{"SIBLING_MARK=readable"}
	if err := sibling.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sibling.Process.Signal(syscall.SIGTERM)
		_ = sibling.Wait()
	})
	read := func(path string) string {
		out, _ := capless(t, "/bin/sh", "-c", `grep ^CapEff /proc/self/status; tr '\0' '\n' < `+path+` 2>&1`).CombinedOutput()
		return string(out)
	}
	if out := read(fmt.Sprintf("/proc/%d/environ", childOf(ctx, t, sibling.Process.Pid, "sleep"))); !strings.Contains(out, "CapEff:\t0000000000000000") || !strings.Contains(out, "SIBLING_MARK=readable") {
		t.Fatalf("the capability-less probe does not read a dumpable process's environment:\n%s", out)
	}
	for _, file := range []string{"environ", "maps", "mem"} {
		out := read(fmt.Sprintf("/proc/%d/%s", dshd, file))
		if !strings.Contains(out, "Permission denied") || strings.Contains(out, token) {
			t.Errorf("/proc/<dshd>/%s is open to its uid without capabilities:\n%.600s", file, out)
		}
	}
	p.stop(t)
}
