// This file implements `dshd auth`: the model API key asked for once and
// stored for dshd, the login an editor runs as ACP terminal auth.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
	"github.com/dshd/dshd/cmd/dshd/internal/keystore"
)

// keyCheckTimeout bounds the question to the model server whether it
// takes the key.
const keyCheckTimeout = 30 * time.Second

// newAuthCmd is `dshd auth`. It takes serve's settings because an editor
// runs it by appending "auth" to the command line it starts dshd with
// (`dshd [flags] auth`, or `dshd serve [flags] auth` where it is serve's
// subcommand too), and those settings pick the backend and so the key.
func newAuthCmd(stdin io.Reader, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Ask for the model API key and store it for dshd",
		Long: `Ask for the model API key and store it, readable by you only (mode 0600), as
$XDG_CONFIG_HOME/dshd/keys/NAME, NAME being the key's environment variable
(DEEPSEEK_API_KEY for the default backend). dshd uses the stored key whenever
that variable is unset or empty, also in a daemon that is already running.

On a terminal the key is read without echo; otherwise it is the first line of
stdin (echo "$KEY" | dshd auth). The model server is asked first whether it
takes the key (GET /models): a key it refuses is not stored.

Editors run this as ACP terminal auth, by appending "auth" to dshd's command
line, so the settings dshd runs with choose the backend here too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := config.Load(cmd.Flags(), os.LookupEnv)
			if err != nil {
				return err
			}
			return storeKey(cmd.Context(), st, stdin, stderr)
		},
	}
	config.AddFlags(cmd.Flags(), config.Serve)
	return cmd
}

func storeKey(ctx context.Context, st *config.Settings, stdin io.Reader, stderr io.Writer) error {
	name, err := daemon.KeyVar(st)
	if err != nil {
		return err
	}
	if name == "" {
		fmt.Fprintln(stderr, "dshd auth: the model these settings choose needs no API key; nothing to store.")
		return nil
	}
	store, err := keystore.Default(os.LookupEnv)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, st.LogLevel, st.LogFormat)
	if err != nil {
		return err
	}
	if v, ok := os.LookupEnv(name); ok && v != "" {
		fmt.Fprintf(stderr, "dshd auth: note: %s is set here, and dshd uses it before a stored key.\n", name)
	}
	key, err := keystore.ReadKey(stdin, stderr, fmt.Sprintf("Model API key (%s): ", name))
	if err != nil {
		return fmt.Errorf("reading the key: %w", err)
	}
	if err := keystore.CheckKey(key); err != nil {
		return fmt.Errorf("%w; nothing stored", err)
	}
	cctx, cancel := context.WithTimeout(ctx, keyCheckTimeout)
	defer cancel()
	switch err := daemon.CheckKey(cctx, st, key, log); {
	case daemon.Refused(err):
		return fmt.Errorf("the model server refused the key (%v); nothing stored", err)
	case err != nil:
		fmt.Fprintf(stderr, "dshd auth: could not ask the model server about the key (%v); storing it anyway.\n", err)
	}
	if err := store.Save(name, key); err != nil {
		return fmt.Errorf("storing the key: %w", err)
	}
	fmt.Fprintf(stderr, "Stored the key in %s, readable by you only. New dshd sessions use it.\n", store.Path(name))
	return nil
}
