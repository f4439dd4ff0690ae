// This file implements `dshd serve`: ACP on stdio, or on a unix or tcp
// socket with --listen.

package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
)

func newServeCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve ACP on stdio (the default) or on a socket (--listen)",
		Long: `Serve the Agent Client Protocol (v1). On stdio, stdout carries ACP messages
only and logs go to stderr. With --listen unix:PATH the socket is created 0600
and serves many clients; with --listen tcp:HOST:PORT the daemon binds loopback
unless HOST says otherwise and requires --token.

Settings come from flags, then DSHD_* environment variables, then the config
file ($XDG_CONFIG_HOME/dshd/config.json), then the defaults shown here.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := config.Load(cmd.Flags(), os.LookupEnv)
			if err != nil {
				return err
			}
			log, err := newLogger(stderr, st.LogLevel, st.LogFormat)
			if err != nil {
				return err
			}
			d, err := daemon.New(st, log, os.LookupEnv)
			if err != nil {
				return err
			}
			defer d.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if st.Listen == "" {
				return d.Server.ServeConn(ctx, stdio{stdin, stdout})
			}
			l, err := listen(st.Listen, st.Token, log)
			if err != nil {
				return err
			}
			log.Info("dshd listening", "addr", st.Listen)
			return d.Server.Serve(ctx, l)
		},
	}
	config.AddFlags(cmd.Flags(), config.Serve)
	return cmd
}

// stdio joins the process's stdin and stdout into one connection.
type stdio struct {
	io.Reader
	io.Writer
}

// Close closes stdin so that a blocked read ends; stdout stays open for
// the last writes of the shutdown.
func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// listen opens the --listen address: unix sockets are created 0600 after
// removing a stale socket file; tcp binds loopback by default and needs a
// token.
func listen(addr, token string, log *slog.Logger) (net.Listener, error) {
	network, where, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("--listen %q: want unix:PATH or tcp:HOST:PORT", addr)
	}
	switch network {
	case "unix":
		if where == "" {
			return nil, errors.New("--listen unix: needs a path")
		}
		if fi, err := os.Lstat(where); err == nil {
			if fi.Mode()&os.ModeSocket == 0 {
				return nil, fmt.Errorf("--listen %s: %s exists and is not a socket; not touching it", addr, where)
			}
			if c, err := net.Dial("unix", where); err == nil {
				c.Close()
				return nil, fmt.Errorf("--listen %s: another daemon is listening there", addr)
			}
			log.Info("removing stale socket", "path", where)
			if err := os.Remove(where); err != nil {
				return nil, err
			}
		}
		old := syscall.Umask(0o177)
		l, err := net.Listen("unix", where)
		syscall.Umask(old)
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(where, 0o600); err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	case "tcp":
		if token == "" {
			return nil, errors.New("--listen tcp: needs a token (--token or DSHD_TOKEN)")
		}
		host, port, err := net.SplitHostPort(where)
		if err != nil {
			return nil, fmt.Errorf("--listen %q: %w", addr, err)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		return net.Listen("tcp", net.JoinHostPort(host, port))
	}
	return nil, fmt.Errorf("--listen %q: want unix:PATH or tcp:HOST:PORT", addr)
}
