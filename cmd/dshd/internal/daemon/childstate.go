// This file tells the acp provider where a child dshd keeps its state, by
// the rule the child itself follows, so that its sandbox lets it write
// exactly there.

package daemon

import (
	"io"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// childPathVars are the variables of a child dshd's environment that name
// paths its state dir depends on (its config file, through the default
// path too); a relative one is relative to the directory it runs in.
// XDG_STATE_HOME is not one: the child passes over a relative one.
var childPathVars = []string{"DSHD_CONFIG", "XDG_CONFIG_HOME", "HOME"}

// childStateDir is the state dir of a child dshd started with args (its
// command line after the program: "serve" and its flags) in the
// environment lookupEnv reads and in the working directory cwd: its
// settings resolved as it resolves them (--state-dir, else
// DSHD_STATE_DIR, else the stateDir of its config file, which --config,
// DSHD_CONFIG or $XDG_CONFIG_HOME names), else the default,
// $XDG_STATE_HOME/dshd (~/.local/state/dshd). The child reads a relative
// config file, and makes a relative state dir, in cwd, so they are
// resolved against cwd here; with cwd not absolute, a relative state dir
// is "". An error is the mistake the child will stop on.
func childStateDir(args []string, lookupEnv func(string) (string, bool), cwd string) (string, error) {
	fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// Flags of its other commands do not move its state dir.
	fs.ParseErrorsAllowlist.UnknownFlags = true
	config.AddFlags(fs, config.Serve)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	inCwd := func(p string) string {
		if p == "" || filepath.IsAbs(p) || !filepath.IsAbs(cwd) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	if f := fs.Lookup("config"); f != nil && f.Changed {
		if err := f.Value.Set(inCwd(f.Value.String())); err != nil {
			return "", err
		}
	}
	env := func(name string) (string, bool) {
		v, ok := lookupEnv(name)
		if slices.Contains(childPathVars, name) {
			v = inCwd(v)
		}
		return v, ok
	}
	st, err := config.Load(fs, env)
	if err != nil {
		return "", err
	}
	dir := st.StateDir
	if dir == "" {
		sessions, err := session.DefaultDirOf(env)
		if err != nil {
			return "", err
		}
		dir = filepath.Dir(sessions)
	}
	dir = inCwd(dir)
	if !filepath.IsAbs(dir) {
		return "", nil
	}
	return filepath.Clean(dir), nil
}
