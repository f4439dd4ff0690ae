// This file tells the acp provider where a child dshd keeps its state, by
// the rule the child itself follows, so that its sandbox lets it write
// exactly there.

package daemon

import (
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// childStateDir is the state dir of a child dshd started with args (its
// command line after the program: "serve" and its flags) in the
// environment lookupEnv reads: its settings resolved as it resolves them
// (--state-dir, else DSHD_STATE_DIR, else the stateDir of its config
// file, which --config, DSHD_CONFIG or $XDG_CONFIG_HOME names), else the
// default, $XDG_STATE_HOME/dshd (~/.local/state/dshd). A relative dir is
// "": it depends on the directory the child runs in. An error is the
// mistake the child will stop on.
func childStateDir(args []string, lookupEnv func(string) (string, bool)) (string, error) {
	fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// Flags of its other commands do not move its state dir.
	fs.ParseErrorsAllowlist.UnknownFlags = true
	config.AddFlags(fs, config.Serve)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	st, err := config.Load(fs, lookupEnv)
	if err != nil {
		return "", err
	}
	if st.StateDir != "" {
		if !filepath.IsAbs(st.StateDir) {
			return "", nil
		}
		return filepath.Clean(st.StateDir), nil
	}
	dir, err := session.DefaultDirOf(lookupEnv)
	if err != nil {
		return "", err
	}
	return filepath.Dir(dir), nil
}
