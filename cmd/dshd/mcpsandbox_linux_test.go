// End-to-end tests of MCP stdio servers under the command sandbox: what a
// server may write with --mcp-sandbox commands (the default) and off, and
// that nothing a server started outlives a dshd killed by SIGKILL.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAnMCPServerWritesOnlyInTheWorkspaceUnlessMCPSandboxIsOff(t *testing.T) {
	needSandbox(t)
	for _, tc := range []struct {
		name         string
		args         []string
		outsideLands bool
	}{
		{"by default", nil, false},
		{"with --mcp-sandbox off", []string{"--mcp-sandbox", "off"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			ws, outside := t.TempDir(), t.TempDir()
			in, out := filepath.Join(ws, "in.txt"), filepath.Join(outside, "out.txt")
			call := func(p string) string {
				b, _ := json.Marshal(map[string]any{"name": "mcp__writer__write", "arguments": map[string]any{"path": p}})
				return string(b)
			}
			script := writeScript(t, `{"rules": [
  {"user": "write", "step": 0, "toolCalls": [`+call(in)+`, `+call(out)+`]},
  {"user": "write", "step": 1, "text": "done"}
]}`)
			_, c := stdioDaemon(t, script, t.TempDir(), append([]string{"--mode", "yolo"}, tc.args...)...)
			c.initialize(ctx, nil)
			var res newResult
			c.call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{writerEntry(t, "1")}}, &res)
			if stop := c.prompt(ctx, res.SessionID, "write both"); stop != "end_turn" {
				t.Fatalf("stop reason %q: %s", stop, dump(c.updates(res.SessionID)))
			}
			ups := dump(c.updates(res.SessionID))
			if _, err := os.Stat(in); err != nil {
				t.Fatalf("the write inside the workspace did not land (%v): %s", err, ups)
			}
			_, err := os.Stat(out)
			switch {
			case tc.outsideLands && err != nil:
				t.Fatalf("the write outside the workspace did not land (%v): %s", err, ups)
			case !tc.outsideLands && err == nil:
				t.Fatalf("the write outside the workspace landed: %s", ups)
			case !tc.outsideLands && !strings.Contains(ups, "permission denied"):
				t.Fatalf("the refused write is not reported to the model: %s", ups)
			}
		})
	}
}

func TestNothingAnMCPServerStartedOutlivesADshdKilledBySIGKILL(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"by default", nil},
		{"with --mcp-sandbox off", []string{"--mcp-sandbox", "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args == nil {
				needSandbox(t)
			}
			ctx := testkit.Context(t)
			script := writeScript(t, `{"rules": [{"text": "fine"}]}`)
			p := start(t, opts{}, append([]string{"serve", "--model", "scripted:" + script, "--state-dir", t.TempDir()}, tc.args...)...)
			c := stdioWire(p)
			c.initialize(ctx, nil)
			var res newResult
			c.call(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{writerEntry(t, "sleep")}}, &res)
			procs := waitSleeps(ctx, t, p, 1)
			p.signal(syscall.SIGKILL)
			p.wait(ctx)
			waitEnded(ctx, t, procs, "the daemon")
		})
	}
}

func TestAnMCPServerThatFailsInTheSandboxIsAWarningNamingTheSandboxAndTheRefusedPath(t *testing.T) {
	needSandbox(t)
	ctx := testkit.Context(t)
	ws := t.TempDir()
	target := filepath.Join(t.TempDir(), "state.db")
	_, c := stdioDaemon(t, writeScript(t, `{"rules": [{"text": "fine"}]}`), t.TempDir())
	c.initialize(ctx, nil)
	entry := writerEntry(t, "fail")
	entry["args"] = []any{target}
	var res newResult
	c.call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{entry}}, &res)
	ups := c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return strings.Contains(dump(ns), "writer") })
	got := dump(ups)
	for _, want := range []string{`MCP server \"writer\"`, "permission denied", "workspace-write sandbox", target, "--sandbox-writable", "--mcp-sandbox off"} {
		if !strings.Contains(got, want) {
			t.Errorf("the warning does not say %q: %s", want, got)
		}
	}
	if stop := c.prompt(ctx, res.SessionID, "hi"); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
}

func TestABadMCPSandboxValueStopsDshdNamingTheSettingAndTheValues(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "a flag", args: []string{"--mcp-sandbox", "workspace-write"},
			want: []string{`--mcp-sandbox "workspace-write"`, "commands, off"}},
		{name: "a variable", env: []string{"DSHD_MCP_SANDBOX=none"},
			want: []string{`DSHD_MCP_SANDBOX "none"`, "commands, off"}},
		{name: "the file", file: `{"mcpSandbox": "of"}`,
			want: []string{"FILE:1:16", "mcpSandbox", `"of"`, `did you mean "off"?`}},
	})
}
