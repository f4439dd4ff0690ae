// End-to-end tests of settings: the missing-key path, precedence of flag,
// environment and config file, the help text, and `dshd version`.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/internal/testkit"
)

func TestWithoutAKeyTheDefaultBackendAsksForDeepSeekAPIKey(t *testing.T) {
	ctx := testkit.Context(t)
	p := start(t, opts{}, "--state-dir", t.TempDir())
	c := stdioWire(p)
	init := c.initialize(ctx, nil)
	var desc string
	for _, m := range init.AuthMethods {
		if strings.Contains(m.Description, "DEEPSEEK_API_KEY") {
			desc = m.Description
		}
	}
	if desc == "" {
		t.Fatalf("no auth method names DEEPSEEK_API_KEY: %+v", init.AuthMethods)
	}
	e := c.callFail(ctx, "session/new", newParams(t.TempDir()))
	if e.Code != -32000 {
		t.Fatalf("session/new without a key: %v, want -32000", e)
	}
	if !strings.Contains(e.Message+string(e.Data), "DEEPSEEK_API_KEY") {
		t.Fatalf("session/new error %v does not name DEEPSEEK_API_KEY", e)
	}
	p.hangUp(ctx)
}

func TestModelsThatNeedNoKeyWorkWithoutOne(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("from the local server"))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"scripted", []string{"--model", "scripted"}, "You said: hi"},
		{"a model URL with an empty key variable", []string{"--model-url", srv.URL(), "--model", "local", "--api-key-env", ""}, "from the local server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			p := start(t, opts{}, append(tc.args, "--state-dir", t.TempDir())...)
			c := stdioWire(p)
			init := c.initialize(ctx, nil)
			if len(init.AuthMethods) != 0 {
				t.Fatalf("auth methods advertised: %+v", init.AuthMethods)
			}
			sid := c.newSession(ctx, t.TempDir())
			c.endTurn(ctx, sid, "hi")
			if got := text(c.updates(sid)); got != tc.want {
				t.Fatalf("answer %q, want %q", got, tc.want)
			}
			p.hangUp(ctx)
		})
	}
}

func TestSettingsPrecedenceFlagThenEnvThenFileThenDefault(t *testing.T) {
	for _, tc := range []struct {
		name       string
		file, env  string // mode in the config file, in DSHD_MODE
		flag, want string
	}{
		{"default", "", "", "", "ask"},
		{"config file", "yolo", "", "", "yolo"},
		{"env over file", "yolo", "accept-edits", "", "accept-edits"},
		{"flag over env and file", "yolo", "accept-edits", "ask", "ask"},
		{"flag over file", "accept-edits", "", "yolo", "yolo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			cfgHome := t.TempDir()
			env := []string{"XDG_CONFIG_HOME=" + cfgHome}
			if tc.file != "" {
				// The file also picks the model: no key is needed only if
				// it was read.
				os.MkdirAll(filepath.Join(cfgHome, "dshd"), 0o755)
				testkit.Write(t, filepath.Join(cfgHome, "dshd"), "config.json", `{"mode": "`+tc.file+`", "model": "scripted"}`)
			} else {
				env = append(env, "DSHD_MODEL=scripted")
			}
			if tc.env != "" {
				env = append(env, "DSHD_MODE="+tc.env)
			}
			args := []string{"--state-dir", t.TempDir()}
			if tc.flag != "" {
				args = append(args, "--mode", tc.flag)
			}
			p := start(t, opts{env: env}, args...)
			c := stdioWire(p)
			c.initialize(ctx, nil)
			var res newResult
			c.call(ctx, "session/new", newParams(t.TempDir()), &res)
			if res.Modes.CurrentModeID != tc.want {
				t.Fatalf("mode %q, want %q", res.Modes.CurrentModeID, tc.want)
			}
			p.hangUp(ctx)
		})
	}
}

func TestABadConfigFileIsAClearError(t *testing.T) {
	cfgHome := t.TempDir()
	os.MkdirAll(filepath.Join(cfgHome, "dshd"), 0o755)
	testkit.Write(t, filepath.Join(cfgHome, "dshd"), "config.json", `{"mode": `)
	code, stdout, stderr := runDshd(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--model", "scripted", "--state-dir", t.TempDir())
	if code == 0 || stdout != "" || !strings.Contains(stderr, "config") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func TestServeHelpListsEverySetting(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := stdout + stderr
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	config.AddFlags(fs, config.Serve)
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		n++
		if !strings.Contains(help, "--"+f.Name) {
			t.Errorf("help lacks --%s", f.Name)
		}
		if f.Name != "config" && !strings.Contains(help, config.EnvName(f.Name)) {
			t.Errorf("help lacks the variable %s", config.EnvName(f.Name))
		}
	})
	if n < 10 {
		t.Fatalf("only %d settings declared", n)
	}
	if !strings.Contains(help, "config.json") {
		t.Errorf("help does not mention the config file")
	}
}

func TestVersionPrintsAVersion(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "version")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	f := strings.Fields(stdout)
	if len(f) < 2 || f[0] != "dshd" || f[1] == "" || !strings.HasSuffix(stdout, "\n") {
		t.Fatalf("version output %q", stdout)
	}
}
