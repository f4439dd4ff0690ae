// End-to-end tests of what README's Configuration section promises for the
// mistakes `dshd serve` finds only once every setting is read: a listener
// without its token or TLS files, and a bad token. Each stops a real dshd
// at start with exit 2, nothing on stdout and one line naming the setting
// and where it came from; and on stdio a token is never asked for.

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAListenerMistakeStopsDshdAtStartWithExit2NamingTheSetting(t *testing.T) {
	dir := t.TempDir()
	short := testkit.Write(t, dir, "short", "tooshort\n")
	good := testkit.Write(t, dir, "good", daemonToken+"\n")
	empty := testkit.Write(t, dir, "empty", "\n")
	missing := filepath.Join(dir, "missing")
	cases := []mistake{
		{name: "a tcp listener without a token", args: []string{"serve", "--listen", "tcp:127.0.0.1:0"},
			want: []string{`--listen "tcp:127.0.0.1:0"`, "token", "DSHD_TOKEN or --token-file"}},
		{name: "a tcp listener from the environment without a token", args: []string{"serve"}, env: []string{"DSHD_LISTEN=tcp:127.0.0.1:0"},
			want: []string{`env DSHD_LISTEN "tcp:127.0.0.1:0"`, "token"}},
		{name: "an http listener off loopback without a token", args: []string{"serve", "--listen", "http://0.0.0.0:0"},
			want: []string{`--listen "http://0.0.0.0:0"`, "off loopback", "token"}},
		{name: "a short token in the environment names the variable, not its value", args: []string{"serve", "--listen", "tcp:127.0.0.1:0"}, env: []string{"DSHD_TOKEN=tooshort"},
			want: []string{"env DSHD_TOKEN", "8 characters", "at least 16"}},
		{name: "a short token in a file names the file", args: []string{"serve", "--listen", "tcp:127.0.0.1:0", "--token-file", short},
			want: []string{`--token-file "` + short + `"`, "8 characters", "at least 16"}},
		{name: "an empty token file", args: []string{"serve", "--listen", "tcp:127.0.0.1:0", "--token-file", empty},
			want: []string{`--token-file "` + empty + `"`, "empty"}},
		{name: "a missing token file", args: []string{"serve", "--listen", "tcp:127.0.0.1:0", "--token-file", missing},
			want: []string{`--token-file "` + missing + `"`, "no such file"}},
		{name: "a token from both places", args: []string{"serve", "--listen", "tcp:127.0.0.1:0", "--token-file", good}, env: []string{"DSHD_TOKEN=" + daemonToken},
			want: []string{`--token-file "` + good + `"`, "DSHD_TOKEN", "not both"}},
		{name: "https without its TLS files", args: []string{"serve", "--listen", "https://127.0.0.1:0"},
			want: []string{`--listen "https://127.0.0.1:0"`, "--tls-cert", "--tls-key"}},
		{name: "TLS files without https", args: []string{"serve", "--listen", "http://127.0.0.1:0", "--tls-cert", good, "--tls-key", good},
			want: []string{`--tls-cert "` + good + `"`, "https://"}},
		{name: "TLS files with a unix listener", args: []string{"serve", "--listen", "unix:" + filepath.Join(dir, "d.sock"), "--tls-key", good},
			want: []string{`--tls-key "` + good + `"`, "https://"}},
		{name: "TLS files that are not PEM", args: []string{"serve", "--listen", "https://127.0.0.1:0", "--tls-cert", good, "--tls-key", good},
			want: []string{"--tls-cert", "--tls-key", "PEM"}},
	}
	runMistakes(t, cases)
}

// runMistakes runs each case as its own dshd: the command first, then a
// state dir and the scripted model for the commands that run an agent
// (prompt, serve),
// the config file, and the case's own arguments.
func runMistakes(t *testing.T, cases []mistake) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{tc.args[0]}
			if tc.args[0] == "prompt" || tc.args[0] == "serve" {
				args = append(args, "--model", "scripted")
				if !slices.ContainsFunc(tc.env, func(kv string) bool { return strings.HasPrefix(kv, "DSHD_STATE_DIR=") }) {
					args = append(args, "--state-dir", t.TempDir())
				}
			}
			checkMistake(t, tc, args, tc.args[1:])
		})
	}
}

func TestAShortTokenInTheEnvironmentDoesNotStopDshdOnStdio(t *testing.T) {
	// README: on stdio the token is never asked for, so an editor whose
	// environment holds a token meant for another daemon is not locked out.
	p := start(t, opts{env: []string{"DSHD_TOKEN=tooshort"}}, "--model", "scripted", "--state-dir", t.TempDir())
	c := stdioWire(p)
	ctx := testkit.Context(t)
	c.endTurn(ctx, c.openSession(ctx, t.TempDir()), "hi")
}

func TestAnEmptyDSHD_TOKENLeavesTheTokenToTheFile(t *testing.T) {
	// DSHD_TOKEN="$TOKEN" with TOKEN unset is no token: the file's is used.
	file := testkit.Write(t, t.TempDir(), "token", daemonToken+"\n")
	p := serveIn(t, opts{env: []string{"DSHD_TOKEN="}}, "unix:"+socketPath(t), t.TempDir(), "--token-file", file)
	p.signal(syscall.SIGTERM)
	if code := p.wait(testkit.Context(t)); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}

func TestTLSFilesInTheEnvironmentDoNotStopDshdOnStdio(t *testing.T) {
	// Like the token, the listener's TLS files are not read on stdio.
	p := start(t, opts{env: []string{"DSHD_TLS_CERT=/nonexistent/cert.pem", "DSHD_TLS_KEY=/nonexistent/key.pem"}}, "--model", "scripted", "--state-dir", t.TempDir())
	c := stdioWire(p)
	ctx := testkit.Context(t)
	c.endTurn(ctx, c.openSession(ctx, t.TempDir()), "hi")
}
