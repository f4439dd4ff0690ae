package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChildStateDirFollowsTheChildsOwnSettings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fromFile := file("file.json", `{"stateDir": "/srv/from-file"}`)
	file("xdg/dshd/config.json", `{"stateDir": "/srv/from-default-file"}`)
	bad := file("bad.json", `{"stateDir": 7}`)
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
		err  string
	}{
		{"--state-dir", []string{"serve", "--model", "m", "--state-dir", "/srv/flag"}, nil, "/srv/flag", ""},
		{"--state-dir=", []string{"serve", "--state-dir=/srv/flag/"}, nil, "/srv/flag", ""},
		{"the flag over the environment", []string{"serve", "--state-dir", "/srv/flag"}, []string{"DSHD_STATE_DIR=/srv/env"}, "/srv/flag", ""},
		{"DSHD_STATE_DIR", []string{"serve"}, []string{"DSHD_STATE_DIR=/srv/env", "XDG_STATE_HOME=/srv/xdg"}, "/srv/env", ""},
		{"the environment over the config file", []string{"serve", "--config", fromFile}, []string{"DSHD_STATE_DIR=/srv/env"}, "/srv/env", ""},
		{"the file --config names", []string{"serve", "--config", fromFile}, nil, "/srv/from-file", ""},
		{"the file DSHD_CONFIG names", []string{"serve"}, []string{"DSHD_CONFIG=" + fromFile}, "/srv/from-file", ""},
		{"the default config file, below XDG_CONFIG_HOME", []string{"serve"}, []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg")}, "/srv/from-default-file", ""},
		{"XDG_STATE_HOME/dshd", []string{"serve"}, []string{"XDG_STATE_HOME=/srv/xdg", "HOME=/home/me"}, "/srv/xdg/dshd", ""},
		{"~/.local/state/dshd", []string{"serve"}, []string{"HOME=/home/me"}, "/home/me/.local/state/dshd", ""},
		{"~/.local/state/dshd when XDG_STATE_HOME is relative", []string{"serve"}, []string{"XDG_STATE_HOME=state", "HOME=/home/me"}, "/home/me/.local/state/dshd", ""},
		{"no dir for a relative one", []string{"serve", "--state-dir", "state"}, nil, "", ""},
		{"flags of other commands are passed over", []string{"serve", "--cwd", "/w", "--state-dir", "/srv/flag"}, nil, "/srv/flag", ""},
		{"a mistake in the config file", []string{"serve", "--config", bad}, nil, "", "stateDir"},
		{"a mistake in the environment", []string{"serve"}, []string{"DSHD_SANDBOX=strict", "HOME=/home/me"}, "", "DSHD_SANDBOX"},
		{"no home", []string{"serve"}, nil, "", "HOME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			got, err := childStateDir(tc.args, func(k string) (string, bool) {
				v, ok := env[k]
				return v, ok
			})
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("childStateDir = %q, %v; want an error naming %s", got, err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Fatalf("childStateDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// BenchmarkChildStateDir is what a child dshd's start pays to know its
// state dir: its settings resolved, its config file read.
func BenchmarkChildStateDir(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "dshd"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dshd", "config.json"), []byte(`{"model": "m", "agents": {"kid": {}}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": dir, "HOME": "/home/me"}
	args := []string{"serve", "--mode", "ask", "--model", "scripted", "--sandbox", "workspace-write"}
	for b.Loop() {
		if _, err := childStateDir(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
			b.Fatal(err)
		}
	}
}
