// End-to-end tests of a "listen" in the config file, which README's
// Configuration section says is left to serve: it must not turn the
// processes that have to speak ACP on their stdio into socket daemons —
// the default acp child (a dshd the provider starts with the parent's
// environment, so the same config file), and plain `dshd`, what editors
// launch.

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestTheDefaultACPChildServesItsStdioWhateverTheConfigFilesListen(t *testing.T) {
	config := t.TempDir()
	testkit.Write(t, config, "dshd/config.json", `{"listen": "unix:`+filepath.Join(t.TempDir(), "parent.sock")+`"}`)
	script := writeScript(t, `{"rules": [
  {"user": "^go", "step": 0, "toolCalls": [{"name": "subagent_acp", "arguments": {"description": "d", "prompt": "child task"}}]},
  {"user": "^go", "step": 1, "text": "result: {{tool}}"},
  {"user": "child task", "text": "child done"}]}`)
	code, stdout, stderr := runDshd(t, []string{"XDG_CONFIG_HOME=" + config}, "prompt", "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--cwd", t.TempDir(),
		"--subagent", "subagent_acp=acp", "go")
	if code != 0 || !strings.Contains(stdout, "result: child done") {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

func TestPlainDshdServesStdioWhateverTheConfigFilesListen(t *testing.T) {
	config := t.TempDir()
	sock := socketPath(t)
	testkit.Write(t, config, "dshd/config.json", `{"listen": "unix:`+sock+`", "model": "scripted"}`)
	env := []string{"XDG_CONFIG_HOME=" + config}
	// What an editor launches: `dshd`, no arguments but its state dir.
	p := start(t, opts{env: env}, "--state-dir", t.TempDir())
	c := stdioWire(p)
	ctx := testkit.Context(t)
	c.endTurn(ctx, c.openSession(ctx, t.TempDir()), "hi")
	// `dshd serve` is the one the file's listen is for.
	waitListening(t, start(t, opts{env: env}, "serve", "--state-dir", t.TempDir()))
	checkServes(ctx, t, "unix", sock)
}
