// This file implements `dshd serve`: ACP on stdio, or on a unix or tcp
// socket with --listen.

package main

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
	"github.com/dshd/dshd/cmd/dshd/internal/listen"
)

func newServeCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve ACP on stdio (the default) or on a socket (--listen)",
		Long: `Serve the Agent Client Protocol (v1). On stdio, stdout carries ACP messages
only and logs go to stderr. With --listen unix:PATH the socket is created 0600
and serves many clients; with --listen tcp:HOST:PORT the daemon binds loopback
unless HOST says otherwise and requires a token of at least 16 characters,
from DSHD_TOKEN or --token-file (never on the command line, where ps shows it).
With --listen http://HOST:PORT (or https:// with --tls-cert and --tls-key) it
serves ACP's remote transport on /acp (WebSocket and Streamable HTTP, the
token as the bearer token, required off loopback), and /healthz, /readyz and
/metrics. On stdio the token is never asked for.

Settings come from flags, then DSHD_* environment variables, then the config
file ($XDG_CONFIG_HOME/dshd/config.json), then the defaults shown here.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := config.Load(cmd.Flags(), os.LookupEnv)
			if err != nil {
				return err
			}
			// Plain `dshd` is what editors and the registry launch, and it
			// serves stdio: a "listen" in the config file, which every dshd
			// of the user reads, is `dshd serve`'s. A flag or DSHD_LISTEN,
			// given to this process, still counts.
			fileListen := !cmd.HasParent() && st.FromFile("listen")
			if fileListen {
				st.Listen = ""
			}
			if st.Token, err = serveToken(st, os.LookupEnv); err != nil {
				return err
			}
			tlsConf, err := checkListener(st)
			if err != nil {
				return err
			}
			log, err := newLogger(stderr, st.LogLevel, st.LogFormat)
			if err != nil {
				return err
			}
			warnUnknownEnv(st, log)
			if fileListen {
				log.Info("serving stdio: the config file's listen is for `dshd serve`")
			}
			d, err := daemon.New(st, log, os.LookupEnv)
			if err != nil {
				return err
			}
			defer d.Close()
			if isRemoteListen(st.Listen) {
				return serveRemote(cmd.Context(), d, st, tlsConf, log)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if st.Listen == "" {
				if st.Token != "" {
					log.Debug("the daemon token (DSHD_TOKEN or --token-file) is ignored on stdio: the peer is the process that started dshd")
				}
				// A write to a closed stdout raises SIGPIPE, which kills a
				// Go program writing to fd 1 unless it asks for the signal;
				// asked for, the write fails with EPIPE and the connection's
				// shutdown runs (turns cancelled, journals closed). Notify,
				// not Ignore: an ignored signal stays ignored in the
				// commands dshd runs, a caught one is reset for them.
				pipe := make(chan os.Signal, 1)
				signal.Notify(pipe, syscall.SIGPIPE)
				defer signal.Stop(pipe)
				return d.Server.ServeConn(ctx, stdio{stdin, stdout})
			}
			inner, err := listen.Open(st.Listen, log)
			if err != nil {
				return err
			}
			l := listen.New(inner, listenOptions(st, log))
			addr := st.Listen
			if listen.IsTCP(addr) {
				// The address bound, so that port 0 (any free port) and an
				// empty host (loopback) say where the daemon is.
				addr = "tcp:" + inner.Addr().String()
			}
			log.Info("dshd listening", "addr", addr)
			return d.Server.Serve(ctx, l)
		},
	}
	config.AddFlags(cmd.Flags(), config.Serve)
	return cmd
}

// listenOptions are the connection limits of a socket or HTTP listener,
// from the settings.
func listenOptions(st *config.Settings, log *slog.Logger) listen.Options {
	return listen.Options{
		MaxConnections:     st.MaxConnections,
		RequireAuth:        st.Token != "",
		MaxUnauthenticated: st.MaxUnauthenticated,
		MaxAuthFailures:    st.MaxAuthFailures,
		AuthPenalty:        st.AuthPenalty,
		Logger:             log,
		// The logs of a hit name the flag, as README spells it.
		Settings: listen.Settings{MaxConnections: "--max-connections", MaxUnauthenticated: "--max-unauthenticated", AuthPenalty: "--auth-penalty"},
	}
}

// stdio joins the process's stdin and stdout into one connection.
type stdio struct {
	io.Reader
	io.Writer
}

// PeerAuthenticated vouches for the stdio peer: it is the process that
// started dshd and already has its privileges, so a token in the
// environment (meant for a socket daemon elsewhere, say) must not lock it
// out.
func (stdio) PeerAuthenticated() bool { return true }

// Close closes stdin so that a blocked read ends; stdout stays open for
// the last writes of the shutdown.
func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
