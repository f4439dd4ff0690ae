// End-to-end test that a command and a stdio MCP server read nothing of
// dshd's secret files (the stored model key, the token file), with reads
// unconfined as by default.

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/cmd/dshd/internal/keystore"
	"github.com/dshd/dshd/internal/testkit"
)

func TestACommandAndAnMCPServerReadNothingOfTheStoredKeyNorTheTokenFile(t *testing.T) {
	needSandbox(t)
	const token, key = "tok-hidden-0123456789abcdef", "k-hidden-stored-0123456789"
	config := t.TempDir()
	// Where and as `dshd auth` stores it.
	store := keystore.Store{Dir: filepath.Join(config, "dshd", "keys")}
	if err := store.Save("E2E_MODEL_KEY", key); err != nil {
		t.Fatal(err)
	}
	keyFile := store.Path("E2E_MODEL_KEY")
	tokenFile := testkit.Write(t, t.TempDir(), "token", token+"\n")
	// What a command or server tries; "end" proves it ran to the end.
	probe := `echo "key:[$(cat ` + keyFile + ` 2>/dev/null)]"; echo "keys:[$(ls -A ` + filepath.Dir(keyFile) + `)]"; echo "token:[$(cat ` + tokenFile + ` 2>&1)]"; echo end`

	srv := fakeModel(t)
	// dshd itself still reads its stored key: no variable holds it.
	srv.RequireAPIKey(key)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if hasToolResult(r.Chat) {
			return openaitest.Text("done")
		}
		return runCommandCall("call_1", probe)
	})
	ctx := testkit.Context(t)
	p := start(t, opts{env: []string{"XDG_CONFIG_HOME=" + config}},
		"serve", "--token-file", tokenFile, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "E2E_MODEL_KEY",
		"--state-dir", t.TempDir(), "--mode", "yolo")
	c := stdioWire(p)
	c.initialize(ctx, nil)
	check := func(t *testing.T, who, out string) {
		t.Helper()
		if !strings.Contains(out, "end") {
			t.Fatalf("%s did not run the whole probe:\n%s", who, out)
		}
		if strings.Contains(out, key) || strings.Contains(out, token) {
			t.Fatalf("%s read a secret of dshd's:\n%s", who, out)
		}
		for _, want := range []string{"key:[]", "keys:[]", "token:[]"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q:\n%s", who, want, out)
			}
		}
	}

	t.Run("a command", func(t *testing.T) {
		sid := c.newSession(ctx, t.TempDir())
		if stop := c.prompt(ctx, sid, "read the secrets"); stop != "end_turn" {
			t.Fatalf("stop reason %q; stderr:\n%s", stop, p.stderr)
		}
		results := toolResults(srv)
		if len(results) != 1 {
			t.Fatalf("tool results: %q", results)
		}
		check(t, "the command", results[0])
	})

	t.Run("a stdio MCP server", func(t *testing.T) {
		out := mcpProbe(ctx, t, c, probe)
		check(t, "the MCP server", out)
	})
	p.stop(t)
}
