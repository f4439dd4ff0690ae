// guard.go: what ends a connection its peer abuses — the handshake
// deadline of a connection that must authenticate, the idle timeout, and
// too many failed authentications — and the hooks that tell the
// transport (a listener's accounting) about authentication.

package rpc

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
)

// Limits hit by the guard, logged once per connection (see Stream.limitHit);
// the handshake deadline also once per episode of the transport's, when
// it keeps one (see handshakeExpired).
const (
	hitHandshake uint32 = 1 << (iota + 16)
	hitIdle
	hitAuthFailures
)

// Authenticated tells the connection of the request whose handler context
// is ctx that its peer authenticated: the pre-authentication line limit
// and handshake deadline of ConnOptions.RequireAuth no longer apply, and a
// transport under the connection that has an Authenticated method (a
// listener counting unauthenticated connections) is told. Outside a
// request handler it does nothing.
func Authenticated(ctx context.Context) {
	if fl, ok := ctx.Value(handlerKey{}).(*inflight); ok {
		fl.c.guard.authenticated()
	}
}

// AuthFailed records a failed authentication on the connection of the
// request whose handler context is ctx. A transport with an AuthFailed
// method (a listener that slows a guessing source down) is told; after
// Limits.MaxAuthFailures of them the connection is closed once this
// request is answered. Outside a request handler it does nothing.
func AuthFailed(ctx context.Context) {
	if fl, ok := ctx.Value(handlerKey{}).(*inflight); ok {
		fl.c.guard.authFailed(ctx)
	}
}

// guard watches one connection.
type guard struct {
	c   *conn
	lim Limits
	// rwc is probed for the optional Authenticated and AuthFailed methods
	// of the transport under the connection.
	rwc any

	authed    atomic.Bool
	handshake *time.Timer
	failures  atomic.Int32

	idle  *time.Timer
	start time.Time
	last  atomic.Int64 // since start, when the last message was read
	calls atomic.Int32 // our calls waiting for their answers
}

// init arms the guard; the connection's stream must exist.
func (g *guard) init(c *conn, rwc any, o *ConnOptions) {
	g.c, g.lim, g.rwc = c, o.Limits, rwc
	settingnames.Fill(&g.lim.Settings)
	g.start = time.Now()
	if o.RequireAuth {
		c.stream.distrust(g.lim.PreAuthMaxLineSize, g.preAuthLineExceeded)
		if d := g.lim.HandshakeTimeout; d > 0 {
			g.handshake = time.AfterFunc(d, func() {
				if !g.authed.Load() {
					if g.handshakeExpired() {
						c.stream.limitHit(hitHandshake, "acp: closing the connection: it did not authenticate in time", "setting", g.lim.Settings.HandshakeTimeout, "timeout", d)
					}
					_ = c.stream.Close()
				}
			})
		}
	} else {
		g.authed.Store(true)
	}
	if d := g.lim.IdleTimeout; d > 0 {
		g.idle = time.AfterFunc(d, g.checkIdle)
	}
}

// stop disarms the timers when the connection ends.
func (g *guard) stop() {
	if g.handshake != nil {
		g.handshake.Stop()
	}
	if g.idle != nil {
		g.idle.Stop()
	}
}

// touch records that a message was read.
func (g *guard) touch() {
	if g.idle != nil {
		g.last.Store(int64(time.Since(g.start)))
	}
}

// checkIdle closes the connection once nothing was read, nothing runs and
// nothing is awaited for IdleTimeout; otherwise it looks again later.
func (g *guard) checkIdle() {
	d := g.lim.IdleTimeout
	if g.busy() {
		g.idle.Reset(d)
		return
	}
	since := time.Since(g.start) - time.Duration(g.last.Load())
	if since < d {
		g.idle.Reset(d - since)
		return
	}
	g.c.stream.limitHit(hitIdle, "acp: closing the idle connection", "setting", g.lim.Settings.IdleTimeout, "timeout", d)
	_ = g.c.stream.Close()
}

// busy reports whether a request is queued or running, or a call of ours
// waits for its answer.
func (g *guard) busy() bool {
	if g.calls.Load() > 0 {
		return true
	}
	c := g.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight) > 0 || len(c.queue) > 0
}

// handshakeExpired tells the transport that the connection is closed at
// its handshake deadline, and reports whether to log it; preAuthLineExceeded
// the same of a line over the pre-authentication limit. A transport with
// the method (a listener, whose connections a peer can open without end)
// answers whether this is the first of an episode, which the next
// connection that authenticates ends; without one, each connection's is
// logged.
func (g *guard) handshakeExpired() bool {
	if t, ok := g.rwc.(interface{ HandshakeExpired() bool }); ok {
		return t.HandshakeExpired()
	}
	return true
}

func (g *guard) preAuthLineExceeded() bool {
	if t, ok := g.rwc.(interface{ PreAuthLineExceeded() bool }); ok {
		return t.PreAuthLineExceeded()
	}
	return true
}

// authenticated lifts the pre-authentication limits and tells the
// transport.
func (g *guard) authenticated() {
	if !g.authed.CompareAndSwap(false, true) {
		return
	}
	if g.handshake != nil {
		g.handshake.Stop()
	}
	g.c.stream.trust(g.lim.MaxLineSize)
	if t, ok := g.rwc.(interface{ Authenticated() }); ok {
		t.Authenticated()
	}
}

// authFailed counts a failed authentication, tells the transport, and
// closes the connection once its answer is out when there were
// MaxAuthFailures of them.
func (g *guard) authFailed(ctx context.Context) {
	n := g.failures.Add(1)
	if t, ok := g.rwc.(interface{ AuthFailed() }); ok {
		t.AuthFailed()
	}
	if int(n) < g.lim.MaxAuthFailures {
		return
	}
	g.c.stream.limitHit(hitAuthFailures, "acp: closing the connection after failed authentications", "setting", g.lim.Settings.MaxAuthFailures, "failures", n)
	AfterAnswer(ctx, func() { _ = g.c.stream.Close() })
}

// PeerName names the other end of rwc for logs: "stdio", or the network
// and address of a socket.
func PeerName(rwc any) string {
	c, ok := rwc.(interface{ RemoteAddr() net.Addr })
	if !ok {
		return "stdio"
	}
	a := c.RemoteAddr()
	if a == nil {
		return "unknown"
	}
	if s := a.String(); s != "" && s != "@" {
		return a.Network() + " " + s
	}
	return a.Network() + " peer"
}
