// End-to-end tests of `dshd auth` and terminal auth: a key stored by the
// command is the key a daemon sends, also a daemon that was already
// running; a key the server refuses is not stored; the terminal method is
// shown only to a client that said it can run one.

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// authHome is a config dir shared by `dshd auth` and the daemons of one
// test (baseEnv gives each process a home of its own).
func authHome(t *testing.T) (env []string, keyFile string) {
	cfg := filepath.Join(t.TempDir(), "config")
	return []string{"XDG_CONFIG_HOME=" + cfg}, filepath.Join(cfg, "dshd", "keys", "DEEPSEEK_API_KEY")
}

// deepSeekAt is the default backend, DeepSeek, at the fake server's URL:
// the key comes from DEEPSEEK_API_KEY or the store.
func deepSeekAt(srv *openaitest.Server, extra ...string) []string {
	return append([]string{"--backend", "deepseek", "--model-url", srv.URL()}, extra...)
}

// runAuth runs `dshd auth` against srv with input on stdin and returns
// the process, exited, with its exit code.
func runAuth(t *testing.T, srv *openaitest.Server, env []string, input string) (*proc, int) {
	t.Helper()
	p := start(t, opts{env: env, stdin: strings.NewReader(input)}, deepSeekAt(srv, "auth")...)
	return p, p.wait(testkit.Context(t))
}

// authAgainst runs `dshd auth` with input on stdin in a fresh home against
// a fake server that accepts only serverKey, and fails unless it exits
// with wantCode.
func authAgainst(t *testing.T, serverKey, input string, wantCode int) (srv *openaitest.Server, env []string, keyFile string, p *proc) {
	t.Helper()
	srv = fakeModel(t)
	srv.RequireAPIKey(serverKey)
	env, keyFile = authHome(t)
	p, code := runAuth(t, srv, env, input)
	if code != wantCode {
		t.Fatalf("dshd auth with %q: exit %d, want %d; stderr:\n%s", input, code, wantCode, p.stderr)
	}
	return srv, env, keyFile, p
}

// checkStored fails unless file holds key, readable by its owner only.
func checkStored(t *testing.T, file, key string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no stored key: %v", err)
	}
	if got := strings.TrimSpace(string(b)); got != key {
		t.Fatalf("stored key %q, want %q", got, key)
	}
	if runtime.GOOS == "windows" {
		return
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	dir, err := os.Stat(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	if dir.Mode().Perm() != 0o700 {
		t.Fatalf("key dir mode %04o, want 0700", dir.Mode().Perm())
	}
}

// chatAuth is the Authorization header of every chat request srv got.
func chatAuth(srv *openaitest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			out = append(out, r.Header.Get("Authorization"))
		}
	}
	return out
}

// authMethods is the initialize result's authMethods, as sent.
func authMethods(ctx context.Context, c *wire, caps map[string]any) []map[string]any {
	c.t.Helper()
	var res struct {
		AuthMethods []map[string]any `json:"authMethods"`
	}
	c.call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": map[string]any{"name": "e2e", "version": "1"}}, &res)
	return res.AuthMethods
}

func terminalMethods(ms []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range ms {
		if m["type"] == "terminal" {
			out = append(out, m)
		}
	}
	return out
}

func TestAuth_AKeyFromStdinIsStoredOwnerOnlyAndANewDaemonSendsIt(t *testing.T) {
	srv, env, keyFile, p := authAgainst(t, "sk-stored", "sk-stored\n", 0)
	checkStored(t, keyFile, "sk-stored")
	if !strings.Contains(p.stderr.String(), keyFile) {
		t.Fatalf("dshd auth does not say where the key went:\n%s", p.stderr)
	}

	srv.Enqueue(openaitest.Text("hello"))
	ctx := testkit.Context(t)
	d := start(t, opts{env: env}, deepSeekAt(srv, "--state-dir", t.TempDir())...)
	c := stdioWire(d)
	for _, m := range authMethods(ctx, c, nil) {
		if m["id"] == "api-key" {
			t.Fatalf("a daemon with a stored key still asks for one: %v", m)
		}
	}
	sid := c.newSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "hi")
	if got := chatAuth(srv); !slices.Equal(got, []string{"Bearer sk-stored"}) {
		t.Fatalf("chat requests sent Authorization %q, want the stored key", got)
	}
	d.hangUp(ctx)
}

func TestAuth_TheKeyVariableWinsOverAStoredKey(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("hello"))
	env, keyFile := authHome(t)
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("sk-stored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runDshd(t, append(env, "DEEPSEEK_API_KEY=sk-env"), deepSeekAt(srv, "prompt", "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")...)
	if code != 0 || stdout != "hello\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if got := chatAuth(srv); !slices.Equal(got, []string{"Bearer sk-env"}) {
		t.Fatalf("Authorization %q, want the variable's key", got)
	}
}

func TestAuth_AKeyTheServerRefusesIsNotStored(t *testing.T) {
	_, _, keyFile, p := authAgainst(t, "sk-right", "sk-wrong\n", 1)
	if !strings.Contains(p.stderr.String(), "refused") || strings.Contains(p.stderr.String(), "sk-wrong") {
		t.Fatalf("stderr should say the key was refused, without showing it:\n%s", p.stderr)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Fatalf("a refused key was stored (%v)", err)
	}
}

func TestAuth_NoKeyOnStdinStoresNothing(t *testing.T) {
	srv := fakeModel(t)
	env, keyFile := authHome(t)
	for _, in := range []string{"", "\n", "two words\n"} {
		p, code := runAuth(t, srv, env, in)
		if code != 1 {
			t.Fatalf("dshd auth with %q: exit %d, want 1; stderr:\n%s", in, code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "nothing stored") {
			t.Fatalf("dshd auth with %q does not say nothing was stored:\n%s", in, p.stderr)
		}
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Fatalf("a key was stored (%v)", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests to the model server for no key", n)
	}
}

func TestAuth_AModelWithoutAKeyHasNothingToStore(t *testing.T) {
	env, _ := authHome(t)
	code, _, stderr := runDshd(t, env, "--model", "scripted", "auth")
	if code != 0 || !strings.Contains(stderr, "needs no API key") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

// The whole terminal-auth flow on one connection: the client that can run
// a terminal sees `dshd auth` as a terminal method, session/new fails until
// the key is stored, then works on the same connection of the same daemon
// and sends the stored key; a client that did not say it can run one never
// sees the method.
func TestTerminalAuth_ARunningDaemonUsesTheKeyDshdAuthStores(t *testing.T) {
	srv := fakeModel(t)
	srv.RequireAPIKey("sk-late")
	env, keyFile := authHome(t)
	ctx := testkit.Context(t)
	state := t.TempDir()
	d := start(t, opts{env: env}, deepSeekAt(srv, "--state-dir", state)...)
	c := stdioWire(d)

	ms := authMethods(ctx, c, map[string]any{"auth": map[string]any{"terminal": true}})
	tm := terminalMethods(ms)
	if len(tm) != 1 {
		t.Fatalf("auth methods %v: want one terminal method", ms)
	}
	args, _ := json.Marshal(tm[0]["args"])
	if string(args) != `["auth"]` || tm[0]["id"] == "" || tm[0]["name"] == "" {
		t.Fatalf("terminal method %v: want args [\"auth\"], an id and a name", tm[0])
	}
	if !strings.Contains(tm[0]["description"].(string), "DEEPSEEK_API_KEY") {
		t.Fatalf("terminal method %v does not name the key variable", tm[0])
	}
	if e := c.callFail(ctx, "authenticate", map[string]any{"methodId": tm[0]["id"]}); e.Code != -32602 {
		t.Fatalf("authenticate with the terminal method: %v, want -32602", e)
	}
	if e := c.callFail(ctx, "session/new", newParams(t.TempDir())); e.Code != -32000 || !strings.Contains(e.Message+string(e.Data), "dshd auth") {
		t.Fatalf("session/new without a key: %v, want -32000 that names dshd auth", e)
	}

	// What the client runs: dshd's own command line with args appended.
	login := start(t, opts{env: env, stdin: strings.NewReader("sk-late\n")}, deepSeekAt(srv, "--state-dir", state, "auth")...)
	if code := login.wait(ctx); code != 0 {
		t.Fatalf("dshd auth: exit %d; stderr:\n%s", code, login.stderr)
	}
	checkStored(t, keyFile, "sk-late")

	// The client reconnects and initializes again; this one keeps its
	// connection, which must work as well.
	authMethods(ctx, c, map[string]any{"auth": map[string]any{"terminal": true}})
	srv.Enqueue(openaitest.Text("now with a key"))
	sid := c.newSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "hi")
	if got := text(c.updates(sid)); got != "now with a key" {
		t.Fatalf("answer %q", got)
	}
	if got := chatAuth(srv); !slices.Equal(got, []string{"Bearer sk-late"}) {
		t.Fatalf("Authorization %q, want the stored key", got)
	}
	d.hangUp(ctx)

	// A client without auth.terminal (none, false, or only the legacy
	// _meta flag) never sees a terminal method.
	for _, caps := range []map[string]any{nil, {"auth": map[string]any{"terminal": false}}, {"_meta": map[string]any{"terminal-auth": true}}} {
		d2 := start(t, opts{}, deepSeekAt(srv, "--state-dir", t.TempDir())...)
		c2 := stdioWire(d2)
		ms := authMethods(ctx, c2, caps)
		if tm := terminalMethods(ms); len(tm) != 0 {
			t.Fatalf("client capabilities %v: terminal method %v listed", caps, tm)
		}
		if len(ms) == 0 {
			t.Fatalf("client capabilities %v: no auth method at all for a daemon without a key", caps)
		}
		d2.hangUp(ctx)
	}
}

func TestAuth_ServeTakesAuthAsItsSubcommandWithItsSettings(t *testing.T) {
	srv := fakeModel(t)
	srv.RequireAPIKey("sk-openai")
	env, _ := authHome(t)
	p := start(t, opts{env: env, stdin: strings.NewReader("sk-openai\n")}, "serve", "--backend", "openai", "--model-url", srv.URL(), "--mode", "yolo", "auth")
	if code := p.wait(testkit.Context(t)); code != 0 {
		t.Fatalf("dshd serve ... auth: exit %d; stderr:\n%s", code, p.stderr)
	}
	checkStored(t, filepath.Join(strings.TrimPrefix(env[0], "XDG_CONFIG_HOME="), "dshd", "keys", "OPENAI_API_KEY"), "sk-openai")
}
