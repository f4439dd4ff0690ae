// This file holds the admission of the http(s) listener: the tcp
// listener's own (listen.Listener: connection caps, accept retries, the
// brake on guessing sources), with the bearer token in the role
// `authenticate` plays on a socket.

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/cmd/dshd/internal/listen"
)

// httpAdmission follows each TCP connection of the http(s) listener from
// accept to its first request with the right bearer token.
type httpAdmission struct {
	// requireAuth: the daemon has a token, so a connection starts
	// unauthenticated and must present it within handshake (0: no
	// deadline).
	requireAuth bool
	handshake   time.Duration
	// maxFailures wrong tokens end a connection (the listener's brake
	// counts them per source as well).
	maxFailures int
	// limitHit counts a hit limit for /metrics.
	limitHit func(limit string)
	log      *slog.Logger
}

// tcpPeer is one TCP connection of the listener.
type tcpPeer struct {
	raw      net.Conn     // under TLS, if any
	lc       *listen.Conn // under raw, as the listener admitted it; nil for another listener
	authed   atomic.Bool
	failures atomic.Int32
	logged   atomic.Bool // the end after failed authentications was logged
}

type peerKey struct{}

// connContext is the http.Server's ConnContext: it remembers the
// connection for the handler's hooks and arms its handshake deadline.
func (a *httpAdmission) connContext(ctx context.Context, nc net.Conn) context.Context {
	p := &tcpPeer{raw: nc}
	if tc, ok := nc.(*tls.Conn); ok {
		p.raw = tc.NetConn()
	}
	if hc, ok := p.raw.(*headConn); ok {
		p.lc, _ = hc.Conn.(*listen.Conn)
	}
	if a.requireAuth && a.handshake > 0 && p.lc != nil {
		time.AfterFunc(a.handshake, func() {
			if p.authed.Load() {
				return
			}
			// The listener's episode of handshake closes, the socket
			// listener's as well; it closes nothing that ended already.
			closed, first := p.lc.ExpireHandshake()
			if closed {
				a.limitHit("handshake")
			}
			if first {
				a.log.Warn("closing the connection: it presented no valid bearer token in time", "setting", "--handshake-timeout", "timeout", a.handshake, "peer", p.raw.RemoteAddr().String())
			}
		})
	}
	return context.WithValue(ctx, peerKey{}, p)
}

func peerOf(r *http.Request) *tcpPeer {
	p, _ := r.Context().Value(peerKey{}).(*tcpPeer)
	return p
}

// authenticated is remote.Options.Authenticated: the connection leaves the
// listener's unauthenticated count and its deadline, its source's record
// of failures is cleared, and an episode of handshake closes ends.
func (a *httpAdmission) authenticated(r *http.Request) {
	p := peerOf(r)
	if p == nil || !p.authed.CompareAndSwap(false, true) {
		return
	}
	if p.lc != nil {
		p.lc.Authenticated()
	}
}

// authFailed is remote.Options.AuthFailed: the failure counts against
// the source in the listener's brake, and the connection ends after
// maxFailures of them, as a socket connection does.
func (a *httpAdmission) authFailed(r *http.Request) bool {
	p := peerOf(r)
	if p == nil {
		return false
	}
	if p.lc != nil {
		p.lc.AuthFailed()
	}
	n := int(p.failures.Add(1))
	if n < a.maxFailures {
		return false
	}
	if !p.logged.Swap(true) {
		a.log.Warn("closing the connection after failed authentications", "setting", "--max-auth-failures", "failures", n, "peer", r.RemoteAddr)
	}
	return true
}

// politeRefusals bounds the refused connections answered at once; beyond
// it a refused connection is only closed, so that a flood of connections
// over the limits costs no more than the limits allow.
const politeRefusals = 16

// refuseWithin bounds the time a refused connection is held to answer it.
const refuseWithin = time.Second

// refuse is listen.Options.Refuse for the http(s) listener: a plaintext
// peer is told why in an HTTP 503 (a TLS peer, before its handshake, can
// only be cut off), and the connection is closed. The answer follows the
// peer's request head: an HTTP client takes a response that comes before
// its request for a stray one and reports no status at all.
func (a *httpAdmission) refuse(secure bool) func(nc net.Conn, limit, reason string) {
	slots := make(chan struct{}, politeRefusals)
	return func(nc net.Conn, limit, reason string) {
		a.limitHit(limit)
		if secure {
			_ = nc.Close()
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			_ = nc.Close()
			return
		}
		go func() {
			defer func() { <-slots }()
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(refuseWithin))
			readHead(nc)
			body := reason + "\n"
			if _, err := fmt.Fprintf(nc, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body); err != nil {
				return
			}
			// Half-close and take what else the peer sends (a body), so
			// that closing with unread input does not reset the
			// connection before the peer has read the answer.
			if cw, ok := nc.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(nc, 1<<20))
		}()
	}
}

// readHead reads from nc until the end of an HTTP request head (an empty
// line), 8 KiB, or the deadline.
func readHead(nc net.Conn) {
	var buf [8 << 10]byte
	n := 0
	for n < len(buf) {
		k, err := nc.Read(buf[n:])
		n += k
		if bytes.Contains(buf[max(0, n-k-3):n], []byte("\r\n\r\n")) || err != nil {
			return
		}
	}
}
