// Tests of stdio servers run under the command sandbox: what a server may
// write, how a refused start reads, and what a failed one says.

package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/tools/sandbox"
)

// confiningSandbox returns a workspace-write sandbox with its caches in a
// temp dir, and skips the test where this kernel cannot confine.
// sandboxFlags are the daemon's names of the commands' sandbox settings,
// which a server's refusal or death must carry.
var sandboxFlags = sandbox.Settings{
	Mode: "--sandbox", Fallback: "--sandbox-fallback", Network: "--sandbox-network",
	WritableRoots: "--sandbox-writable (sandboxWritableRoots in the config file)",
	ReadableRoots: "--sandbox-readable (sandboxReadableRoots in the config file)",
}

func confiningSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(&sandbox.Config{Caches: []string{t.TempDir()}, Grace: 200 * time.Millisecond, Settings: sandboxFlags})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Describe(nil); errors.Is(err, sandbox.ErrRefused) {
		t.Skipf("this kernel cannot confine (no Landlock): %v", err)
	}
	return sb
}

func TestASandboxedServerWritesOnlyInTheWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sandbox      func(*testing.T) *sandbox.Sandbox
		outsideLands bool
	}{
		{"under the sandbox", confiningSandbox, false},
		{"without a sandbox", func(*testing.T) *sandbox.Sandbox { return nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			opts := &Options{Cwd: ws, Roots: []string{ws}, Sandbox: tc.sandbox(t), KillGrace: 300 * time.Millisecond}
			set, reg := mustConnect(t, opts, helperServer(t, "helper", "tools"))

			in := filepath.Join(ws, "in.txt")
			if res := run(t, reg, "mcp__helper__write", nil, map[string]any{"path": in}); res.IsError {
				t.Fatalf("the write inside the workspace failed: %s", res.Output)
			}
			if _, err := os.Stat(in); err != nil {
				t.Fatalf("the write inside the workspace did not land: %v", err)
			}
			out := filepath.Join(outside, "out.txt")
			res := run(t, reg, "mcp__helper__write", nil, map[string]any{"path": out})
			_, err := os.Stat(out)
			switch {
			case tc.outsideLands && (res.IsError || err != nil):
				t.Fatalf("the write outside the workspace failed unconfined: %s (%v)", res.Output, err)
			case !tc.outsideLands && err == nil:
				t.Fatalf("the write outside the workspace landed: %s", res.Output)
			case !tc.outsideLands && (!res.IsError || !strings.Contains(res.Output, "permission denied")):
				t.Fatalf("the refused write is not an error result saying so: %+v", res)
			}
			closeAll(t, set, reg)
		})
	}
}

func TestASandboxThatCannotConfineRefusesTheServerOrRunsItUnconfined(t *testing.T) {
	// A helper that cannot start: the sandbox cannot confine, as on a
	// kernel without Landlock.
	broken := func(t *testing.T, fb sandbox.Fallback) *sandbox.Sandbox {
		sb, err := sandbox.New(&sandbox.Config{Helper: []string{filepath.Join(t.TempDir(), "no-such-helper")}, Fallback: fb, Settings: sandboxFlags})
		if err != nil {
			t.Fatal(err)
		}
		return sb
	}
	t.Run("refuse", func(t *testing.T) {
		_, reg, warnings := connect(t, &Options{Cwd: t.TempDir(), Sandbox: broken(t, sandbox.Refuse), Settings: flags}, helperServer(t, "helper", "tools"))
		if len(warnings) != 1 {
			t.Fatalf("warnings %v, want one", warnings)
		}
		w := warnings[0]
		t.Logf("the warning: %v", w)
		if !errors.Is(w, ErrStart) || !errors.Is(w, sandbox.ErrRefused) {
			t.Errorf("the warning is not a refused start: %v", w)
		}
		for _, want := range []string{`MCP server "helper"`, "sandbox", "--sandbox-fallback unconfined", "--mcp-sandbox off"} {
			if !strings.Contains(w.Error(), want) {
				t.Errorf("the warning does not say %q: %v", want, w)
			}
		}
		if n := reg.Names(); len(n) != 0 {
			t.Errorf("a refused server registered tools: %v", n)
		}
	})
	t.Run("unconfined", func(t *testing.T) {
		_, reg := mustConnect(t, &Options{Cwd: t.TempDir(), Sandbox: broken(t, sandbox.Unconfined)}, helperServer(t, "helper", "tools"))
		out := filepath.Join(t.TempDir(), "out.txt")
		if res := run(t, reg, "mcp__helper__write", nil, map[string]any{"path": out}); res.IsError {
			t.Fatalf("the unconfined server could not write: %s", res.Output)
		}
	})
}

func TestAServerThatFailsInTheSandboxSaysWhichSandboxAndWhatWasRefused(t *testing.T) {
	sb := confiningSandbox(t)
	ws, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "state.db")
	cfg := helperServer(t, "writer", "writefail")
	cfg.Args = []string{target}
	_, _, warnings := connect(t, &Options{Cwd: ws, Roots: []string{ws}, Sandbox: sb, KillGrace: 300 * time.Millisecond, Settings: flags}, cfg)
	if len(warnings) != 1 || !errors.Is(warnings[0], ErrExited) {
		t.Fatalf("warnings %v, want one exit", warnings)
	}
	msg := warnings[0].Error()
	t.Logf("the warning: %s", msg)
	for _, want := range []string{"exit status 1", "permission denied", "workspace-write sandbox", ws, target, "--sandbox-writable", "--mcp-sandbox off"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the warning does not say %q:\n%s", want, msg)
		}
	}
}

func TestASandboxedServerThatCannotBeFoundSaysSo(t *testing.T) {
	sb := confiningSandbox(t)
	ws := t.TempDir()
	cfg := ServerConfig{Name: "ghost", Command: "./bin/no-such-server"}
	_, _, warnings := connect(t, &Options{Cwd: ws, Roots: []string{ws}, Sandbox: sb, KillGrace: 300 * time.Millisecond, Settings: flags}, cfg)
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "no-such-server") || !strings.Contains(warnings[0].Error(), "no such file") {
		t.Fatalf("warnings %v, want one naming the missing program", warnings)
	}
}

func TestClosingASandboxedServerEndsWhatItStartedAndRemovesItsTempDir(t *testing.T) {
	sb := confiningSandbox(t)
	ws := t.TempDir()
	set, reg := mustConnect(t, &Options{Cwd: ws, Roots: []string{ws}, Sandbox: sb, KillGrace: 200 * time.Millisecond}, helperServer(t, "helper", "stubborn"))
	res := run(t, reg, "mcp__helper__env", nil, map[string]any{})
	tmp := ""
	for _, kv := range strings.Split(res.Output, `"`) {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	if tmp == "" {
		t.Fatalf("the server has no TMPDIR: %s", res.Output)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the server's temp dir %s: %v", tmp, err)
	}
	pid := set.Servers()[0].PID
	closeAll(t, set, reg)
	if exists(pid) {
		t.Errorf("the server's helper %d is still there", pid)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's temp dir %s is still there: %v", tmp, err)
	}
}

func TestTheEverythingServerRunsUnderTheSandbox(t *testing.T) {
	cfg := everythingServer(t)
	sb := confiningSandbox(t)
	ws := t.TempDir()
	set, reg := mustConnect(t, &Options{Cwd: ws, Roots: []string{ws}, Sandbox: sb}, cfg)
	if res := run(t, reg, "mcp__everything__echo", nil, map[string]any{"message": "confined"}); res.IsError || res.Output != "Echo: confined" {
		t.Errorf("echo: %+v", res)
	}
	closeAll(t, set, reg)
}
