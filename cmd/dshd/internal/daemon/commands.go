// This file wires the command runner: the sandbox commands run in and the
// environment they get, without any of dshd's own secrets.

package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/keystore"
	acpprovider "github.com/dshd/dshd/subagents/acp"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/cmdenv"
	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/subagent"
)

// commandRunner builds the local runner of every session's commands (and
// of the terminals acp children ask for): the configured sandbox, and the
// configured environment policy applied to dshd's own environment once.
func commandRunner(st *config.Settings, keyEnv, key string, bindings []subagent.Binding, log *slog.Logger, lookupEnv func(string) (string, bool)) (*localrun.Runner, error) {
	sb, err := sandbox.New(commandSandbox(st, log, lookupEnv))
	if err != nil {
		return nil, err
	}
	p := commandEnv(st, keyEnv, key, bindings, lookupEnv)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return localrun.New(&localrun.Options{Env: p.Apply(os.Environ()), Sandbox: sb, Logger: log}), nil
}

// commandSandbox is the configured sandbox of commands, which the acp
// provider also derives its child processes' sandboxes from (and stdio
// MCP servers run in by default). lookupEnv finds the key store.
func commandSandbox(st *config.Settings, log *slog.Logger, lookupEnv func(string) (string, bool)) *sandbox.Config {
	return &sandbox.Config{
		Hidden:        secretFiles(st, lookupEnv),
		Mode:          sandbox.Mode(st.Sandbox),
		NoNetwork:     !st.SandboxNetwork,
		WritableRoots: st.SandboxWritable,
		ReadableRoots: st.SandboxReadable,
		NoCaches:      !st.SandboxCaches,
		Fallback:      sandbox.Fallback(st.SandboxFallback),
		Logger:        log,
		// Its refusals and notes name the flags, as README spells them.
		Settings: sandbox.Settings{
			Mode: "--sandbox", Fallback: "--sandbox-fallback", Network: "--sandbox-network",
			WritableRoots: "--sandbox-writable (sandboxWritableRoots in the config file)",
			ReadableRoots: "--sandbox-readable (sandboxReadableRoots in the config file)",
		},
	}
}

// secretFiles are dshd's files that hold secrets, which confined commands
// see empty: the key store's directory and the token file. A child dshd
// gets its key through its environment (childEnv), not the store.
func secretFiles(st *config.Settings, lookupEnv func(string) (string, bool)) []string {
	var out []string
	if store, err := keystore.Default(lookupEnv); err == nil {
		if dir, err := filepath.Abs(store.Dir); err == nil {
			out = append(out, dir)
		}
	}
	if st.TokenFile != "" {
		if file, err := filepath.Abs(st.TokenFile); err == nil {
			out = append(out, file)
		}
	}
	return out
}

// commandEnv is the environment policy of commands: the configured one,
// plus dshd's own secrets, by name and by value: the token, the model key
// (key, which may be the stored one no variable holds) and every token a binding or named agent holds or names.
func commandEnv(st *config.Settings, keyEnv, key string, bindings []subagent.Binding, lookupEnv func(string) (string, bool)) cmdenv.Policy {
	p := cmdenv.Policy{
		Inherit:         cmdenv.Inherit(st.CommandEnv),
		KeepSecretNames: st.CommandEnvSecret,
		Exclude:         st.CommandEnvDrop,
		IncludeOnly:     st.CommandEnvOnly,
		Set:             st.CommandEnvSet,
		SecretValues:    []string{st.Token, key},
	}
	secretName := func(name string) {
		if name == "" {
			return
		}
		p.Secrets = append(p.Secrets, name)
		if v, ok := lookupEnv(name); ok {
			p.SecretValues = append(p.SecretValues, v)
		}
	}
	secretName("DSHD_TOKEN")
	secretName(keyEnv)
	for _, b := range bindings {
		secretName(b.Options[acpprovider.KeyTokenEnv])
		p.SecretValues = append(p.SecretValues, b.Options[acpprovider.KeyToken])
	}
	for _, a := range st.Agents {
		p.SecretValues = append(p.SecretValues, a.Token)
	}
	return p
}

// sandboxWarnings returns the setup warning of a sandbox that cannot
// confine commands as configured (no Landlock in this kernel, or a helper
// that cannot start): every session shows it, since its commands then run
// unconfined or are refused. --sandbox off is a choice, not a warning.
func sandboxWarnings(mode string, r *localrun.Runner) func() []server.Warning {
	return func() []server.Warning {
		if sandbox.Mode(mode) == sandbox.Off {
			return nil
		}
		desc, err := r.DescribeSandbox(tools.Command{})
		switch {
		case err != nil:
			return []server.Warning{{Severity: acp.NoticeError, Title: "Commands are refused: this system cannot sandbox them", Detail: err.Error()}}
		case strings.HasPrefix(desc, "no sandbox"):
			return []server.Warning{{Title: "Commands run unconfined: this system cannot sandbox them", Detail: desc}}
		}
		return nil
	}
}
