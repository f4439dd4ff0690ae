// This file implements `dshd serve --listen http(s)://HOST:PORT`: ACP's
// remote transport on /acp, the probes, metrics, and the drain on SIGTERM.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
	"github.com/dshd/dshd/cmd/dshd/internal/listen"
)

// isRemoteListen reports whether --listen names the remote transport.
func isRemoteListen(addr string) bool {
	return strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://")
}

// serveRemote serves until a signal: the first SIGTERM or SIGINT drains
// (readiness goes false, new sessions and turns are refused, running turns
// get --drain-grace-seconds, then their cancel --close-timeout), then every
// connection is ended within --close-timeout, which cancels the turns left
// and journals them. A second signal ends at once.
func serveRemote(parent context.Context, d *daemon.Daemon, st *config.Settings, tlsConf *tls.Config, log *slog.Logger) error {
	u, err := url.Parse(st.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", st.Listen, err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", st.Listen, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	// checkListener vetted the token and the TLS files.
	secure := tlsConf != nil

	srv := d.Server
	// The limits of the unix and tcp listeners, as they apply here: the
	// same settings bound each ACP connection (the rpc stream under
	// srv.ServeConn has them too), and the TCP listener is the tcp one's.
	adm := &httpAdmission{
		requireAuth: st.Token != "",
		handshake:   max(st.HandshakeTimeout, 0),
		maxFailures: max(st.MaxAuthFailures, 1),
		limitHit:    d.Metrics.LimitHit,
		log:         log,
	}
	heads := &headWatch{timeout: st.HeaderTimeout, tls: tlsConf != nil, maxHead: st.MaxHeaderBytes, maxStreams: st.HTTP2MaxStreams, writeTimeout: st.WriteTimeout, limitHit: d.Metrics.LimitHit, log: log}
	h, err := remote.NewHandler(remote.Options{
		Serve:              func(ctx context.Context, rwc io.ReadWriteCloser) error { return srv.ServeConn(ctx, rwc) },
		Token:              st.Token,
		Authenticated:      adm.authenticated,
		AuthFailed:         adm.authFailed,
		SessionExists:      srv.SessionExists,
		Accepting:          func() bool { return !srv.Draining() },
		MaxConnections:     st.MaxConnections,
		MaxStreams:         st.MaxSessionsPerConn,
		MaxMessageBytes:    st.MaxLineBytes,
		MaxInitializeBytes: st.PreauthMaxLineBytes,
		MaxQueuedInput:     st.MaxQueuedInputBytes,
		MaxQueuedOutput:    st.MaxQueuedOutputBytes,
		WriteTimeout:       orNever(st.WriteTimeout),
		HandshakeTimeout:   orNever(st.HandshakeTimeout),
		IdleTimeout:        orNever(st.IdleTimeout),
		KeepAlive:          seconds(st.KeepaliveSeconds),
		DetachTimeout:      seconds(st.DetachTimeoutSeconds),
		AffinityCookie:     st.AffinityCookie,
		AffinityValue:      affinityValue(),
		Secure:             secure,
		// The logs of a hit name the flag, as README spells it.
		Settings: remote.Settings{
			MaxConnections: "--max-connections", MaxStreams: "--max-sessions-per-connection",
			MaxMessageBytes: "--max-line-bytes", MaxInitializeBytes: "--preauth-max-line-bytes",
			WriteTimeout: "--write-timeout", DetachTimeout: "--detach-timeout-seconds",
			IdleTimeout: "--idle-timeout", HandshakeTimeout: "--handshake-timeout",
		},
		Observer: d.Metrics,
		Logger:   log,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	mux.Handle("/metrics", d.Metrics.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if srv.Draining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(!secure) // h2c with prior knowledge
	hs := &http.Server{
		Handler:   heads.boundWrites(heads.handler(mux)),
		TLSConfig: tlsConf,
		// A request's headers come within --header-timeout; a connection
		// that has not authenticated may be closed sooner, at
		// --handshake-timeout, by the admission (which logs it). An idle
		// keep-alive connection, between requests, is closed after
		// --keepalive-timeout; its ACP connection does not end with it.
		// The settings refuse 0, which net/http would read as "the
		// other timeout" or "never". The header timeout also bounds a
		// TLS handshake; heads logs what it cuts. The idle close is
		// not logged: it is how a keep-alive connection normally ends.
		ReadHeaderTimeout: st.HeaderTimeout,
		IdleTimeout:       st.KeepaliveTimeout,
		// Every write is bounded by --write-timeout (httpwrites.go).
		// boundWrites lifts this deadline on every request dshd
		// handles; it stays for what net/http answers without calling
		// the handler, which on HTTP/2 nothing else reaches. It also
		// bounds a TLS handshake, when shorter than ReadHeaderTimeout
		// (net/http's rule; headWatch names it then).
		WriteTimeout:   st.WriteTimeout,
		MaxHeaderBytes: heads.serverMaxHeaderBytes(),
		Protocols:      &protocols,
		// Every SSE stream is one HTTP/2 stream; a client with many
		// sessions needs more than net/http's default 250.
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: st.HTTP2MaxStreams,
			CountError:           heads.countError,
		},
		ErrorLog:    httpErrorLog(log),
		ConnContext: adm.connContext,
		ConnState:   heads.connState,
	}
	inner, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return err
	}
	lo := listenOptions(st, log)
	lo.Refuse = adm.refuse(secure)
	l := heads.listener(listen.New(inner, lo))
	endpoint := (&url.URL{Scheme: u.Scheme, Host: l.Addr().String(), Path: "/acp"}).String()
	log.Info("dshd listening", "addr", endpoint, "tls", secure, "token", st.Token != "")

	served := make(chan error, 1)
	go func() {
		if secure {
			served <- hs.ServeTLS(l, "", "")
		} else {
			served <- hs.Serve(l)
		}
	}()

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sig)
	select {
	case err := <-served:
		_ = h.Close(context.Background())
		return err
	case <-parent.Done():
	case s := <-sig:
		drain(srv, st, log, s, sig)
	}
	// The connections end themselves, writing what they still have,
	// within --close-timeout; a client that reads none of it is cut off.
	ctx, cancel := context.WithTimeout(context.Background(), st.CloseTimeout)
	defer cancel()
	closed := h.Close(ctx)
	shut := hs.Shutdown(ctx)
	if shut != nil {
		_ = hs.Close()
	}
	if err := errors.Join(closed, shut); err != nil {
		log.Warn("cut off the connections that had not ended in time after the shutdown began", "setting", "--close-timeout", "timeout", st.CloseTimeout, "err", err)
	}
	<-served
	log.Info("dshd stopped")
	return nil
}

// drain refuses new work and waits for the running turns, up to the grace
// or a second signal.
func drain(srv interface {
	Drain()
	RunningTurns() int
	WaitTurns(context.Context) bool
	CancelTurns()
}, st *config.Settings, log *slog.Logger, s os.Signal, sig <-chan os.Signal) {
	srv.Drain()
	grace := seconds(st.DrainGraceSeconds)
	log.Info("draining", "signal", s.String(), "turns", srv.RunningTurns(), "grace", grace)
	ctx, cancel := context.WithTimeout(context.Background(), max(grace, 0))
	defer cancel()
	go func() {
		select {
		case <-sig:
			log.Info("second signal: stopping now")
			cancel()
		case <-ctx.Done():
		}
	}()
	if srv.WaitTurns(ctx) {
		return
	}
	log.Warn("the drain grace is over: cancelling the turns still running", "turns", srv.RunningTurns())
	// Cancelled turns answer their prompts and journal what they did
	// while the connections are still open.
	srv.CancelTurns()
	wait, stop := context.WithTimeout(context.Background(), st.CloseTimeout)
	defer stop()
	if !srv.WaitTurns(wait) {
		log.Warn("turns did not end after their cancel", "setting", "--close-timeout", "timeout", st.CloseTimeout, "turns", srv.RunningTurns())
	}
}

// loopbackOnly reports whether host binds only loopback addresses.
func loopbackOnly(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// affinityValue names this daemon in the affinity cookie: the host name,
// which in Kubernetes is the pod's.
func affinityValue() string {
	h, _ := os.Hostname()
	return h
}

// orNever turns a duration setting where 0 means never into the -1 the
// remote transport reads so.
func orNever(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// seconds turns a seconds setting into a duration; 0 means none (-1).
func seconds(n int) time.Duration {
	if n <= 0 {
		return -1
	}
	return time.Duration(n) * time.Second
}
