package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// lookupIn is a getenv of the environment env, "KEY=value" a string.
func lookupIn(env []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestChildStateDirFollowsTheChildsOwnSettings(t *testing.T) {
	dir := t.TempDir()
	fromFile := testkit.Write(t, dir, "file.json", `{"stateDir": "/srv/from-file"}`)
	testkit.Write(t, dir, "xdg/dshd/config.json", `{"stateDir": "/srv/from-default-file"}`)
	bad := testkit.Write(t, dir, "bad.json", `{"stateDir": 7}`)
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
		{"flags of other commands are passed over", []string{"serve", "--cwd", "/w", "--state-dir", "/srv/flag"}, nil, "/srv/flag", ""},
		{"a mistake in the config file", []string{"serve", "--config", bad}, nil, "", "stateDir"},
		{"a mistake in the environment", []string{"serve"}, []string{"DSHD_SANDBOX=strict", "HOME=/home/me"}, "", "DSHD_SANDBOX"},
		{"no home", []string{"serve"}, nil, "", "HOME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childStateDir(tc.args, lookupIn(tc.env), "/work/session")
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("childStateDir = %q, %v; want an error naming %s", got, err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Fatalf("childStateDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestChildStateDirResolvesRelativePathsInTheChildsDir: the child reads a
// relative config file, and makes a relative state dir, in the directory
// it runs in (the session's), not in the parent's.
func TestChildStateDirResolvesRelativePathsInTheChildsDir(t *testing.T) {
	child := t.TempDir()
	testkit.Write(t, child, "child.json", `{"stateDir": "/srv/from-the-childs-file"}`)
	testkit.Write(t, child, "relative.json", `{"stateDir": "kept"}`)
	testkit.Write(t, child, "xdg/dshd/config.json", `{"stateDir": "/srv/from-the-childs-xdg"}`)
	testkit.Write(t, child, "home/.config/dshd/config.json", `{"stateDir": "/srv/from-the-childs-home"}`)
	// The parent runs elsewhere, where none of these files are.
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		dir  string
		want string
	}{
		{"a relative --config", []string{"serve", "--config", "child.json"}, []string{"HOME=/home/me"}, child, "/srv/from-the-childs-file"},
		{"a relative --config=", []string{"serve", "--config=./child.json"}, []string{"HOME=/home/me"}, child, "/srv/from-the-childs-file"},
		{"a relative DSHD_CONFIG", []string{"serve"}, []string{"DSHD_CONFIG=child.json", "HOME=/home/me"}, child, "/srv/from-the-childs-file"},
		{"a relative XDG_CONFIG_HOME", []string{"serve"}, []string{"XDG_CONFIG_HOME=xdg", "HOME=/home/me"}, child, "/srv/from-the-childs-xdg"},
		{"a relative HOME", []string{"serve"}, []string{"HOME=home"}, child, "/srv/from-the-childs-home"},
		{"a relative --state-dir", []string{"serve", "--state-dir", "state"}, nil, child, filepath.Join(child, "state")},
		{"a relative DSHD_STATE_DIR", []string{"serve"}, []string{"DSHD_STATE_DIR=../state", "HOME=/home/me"}, child, filepath.Join(filepath.Dir(child), "state")},
		// The child makes it where it runs, not next to its file.
		{"a relative stateDir in the config file", []string{"serve", "--config", "relative.json"}, []string{"HOME=/home/me"}, child, filepath.Join(child, "kept")},
		{"an absolute --config is read where it is", []string{"serve", "--config", filepath.Join(child, "child.json")}, nil, "/elsewhere", "/srv/from-the-childs-file"},
		{"none for a relative --state-dir in an unknown dir", []string{"serve", "--state-dir", "state"}, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childStateDir(tc.args, lookupIn(tc.env), tc.dir)
			if err != nil || got != tc.want {
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
		if _, err := childStateDir(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, dir); err != nil {
			b.Fatal(err)
		}
	}
}
