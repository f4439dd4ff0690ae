// handler.go: the /acp endpoint — authentication, admission, and the
// routing of each request to the WebSocket or Streamable HTTP side.

package remote

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/dshd/dshd/internal/settingnames"
)

// Options configure a [Handler]. Zero fields take the defaults named on
// them.
type Options struct {
	// Serve serves one ACP connection over rwc until it ends or ctx is
	// done; required. The rwc it gets reports PeerAuthenticated() true
	// when the request carried the right bearer token.
	Serve func(ctx context.Context, rwc io.ReadWriteCloser) error

	// Token, when set, must be presented on every request as
	// "Authorization: Bearer TOKEN", checked before any upgrade, stream or
	// message: a request without it is answered 401, a wrong one 403.
	// Without a Token, only requests addressed to loopback (their Host
	// header) are served, and others answered 403: the handler then
	// trusts whoever reaches it, which a listener may do on loopback only.
	Token string
	// Authenticated and AuthFailed, when set, are told of every request
	// with the right token, and with a wrong or missing one: the listener
	// under the handler counts unauthenticated connections and slows a
	// guessing source down. When AuthFailed returns true the request's
	// connection is ended after its answer (Connection: close; a GOAWAY on
	// HTTP/2).
	Authenticated func(r *http.Request)
	AuthFailed    func(r *http.Request) (endConn bool)

	// SessionExists reports whether the agent knows a session (live or
	// stored). A session-scoped SSE stream for a session it does not know
	// is answered 404. Nil takes every session for known.
	SessionExists func(id string) bool
	// Accepting reports whether new ACP connections are taken (false
	// while the daemon drains); when it returns false, initialize and
	// WebSocket upgrades are answered 503. Nil always accepts.
	Accepting func() bool

	// The limits below are the daemon's connection limits (acp/rpc.Limits
	// and its listener's) as they apply to this transport.
	//
	// MaxConnections caps the ACP connections open at once, WebSocket and
	// HTTP together (default 1024); more are answered 503.
	MaxConnections int
	// MaxStreams caps the session-scoped SSE streams of one HTTP
	// connection (default 1024, the daemon's sessions per connection);
	// the messages of sessions beyond it go on the connection's stream.
	MaxStreams int
	// MaxMessageBytes caps one POST body of an open connection (default
	// 64 MiB; 413 beyond), the socket's line limit. A connection's bodies
	// are read one at a time, as a socket's lines are. WebSocket frames
	// are lines of the rpc stream, which caps them itself.
	MaxMessageBytes int
	// MaxInitializeBytes caps a POST without Acp-Connection-Id, which can
	// only be the initialize that opens a connection (default 64 KiB; 413
	// beyond), as the first line of a socket is capped before its
	// connection has authenticated.
	MaxInitializeBytes int
	// MaxQueuedInput bounds the bytes POSTed to one HTTP connection and
	// not yet read by the agent (default 4 MiB); beyond it the next POST
	// waits (backpressure). One message larger than the bound still goes
	// in alone.
	MaxQueuedInput int
	// MaxQueuedOutput bounds the bytes one HTTP connection holds for its
	// SSE readers (default 4 MiB); beyond it the agent's writes wait.
	MaxQueuedOutput int
	// WriteTimeout ends an HTTP connection whose SSE readers have taken
	// none of its queued output for this long (default 60 s), and bounds
	// how long one SSE stream's messages wait for the earlier ones of a
	// stream whose reader takes nothing. In these durations a negative
	// value means never.
	WriteTimeout time.Duration
	// DetachTimeout ends an HTTP connection that has had no SSE stream
	// open and no POST for this long (default 30 s), which frees its
	// sessions for session/load on a new connection.
	DetachTimeout time.Duration
	// KeepAlive is the interval of SSE keepalive comments and WebSocket
	// pings (default 15 s; negative: none).
	KeepAlive time.Duration
	// IdleTimeout bounds the body of any other POST (408 beyond), as a
	// socket's unfinished line is bounded by the idle timeout: the
	// connection has read no message for that long (default: never).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the body of the initialize POST (408
	// beyond) and the agent's answer to it (default 10 s).
	HandshakeTimeout time.Duration
	// Settings name these limits in the logs of their hits (the
	// daemon's flags), so that an operator knows what to raise.
	Settings Settings

	// AffinityCookie and AffinityValue, when both set, are sent as a cookie
	// on the initialize answer and the WebSocket upgrade, for a load
	// balancer that keeps a client on one backend by cookie. Secure
	// marks it Secure (TLS listeners).
	AffinityCookie, AffinityValue string
	Secure                        bool
	// OriginPatterns lists the browser origins allowed to open a
	// WebSocket besides the endpoint's own host (coder/websocket's
	// patterns). Requests without an Origin header (non-browser clients)
	// are always allowed.
	OriginPatterns []string

	// Observer is told of connections and hit limits; nil: nobody.
	Observer Observer
	// Logger receives the handler's logs; nil discards.
	Logger *slog.Logger
}

// Settings name the limits of [Options] in the logs of their hits, one
// field for each limit of the same name; an empty field is that name.
type Settings struct {
	MaxConnections, MaxStreams, MaxMessageBytes, MaxInitializeBytes string
	WriteTimeout, DetachTimeout, IdleTimeout, HandshakeTimeout      string
}

// Observer is told what the transport does, for metrics. Its methods must
// return at once.
type Observer interface {
	// ConnOpened and ConnClosed bracket one ACP connection; transport is
	// "websocket" or "http".
	ConnOpened(transport string)
	ConnClosed(transport string)
	// LimitHit counts a request refused or a connection ended by a limit:
	// "connections", "message-size", "write-timeout", "streams", "auth",
	// "handshake", "idle".
	LimitHit(limit string)
}

// Defaults of Options.
const (
	DefaultMaxConnections     = 1024
	DefaultMaxStreams         = 1024
	DefaultMaxMessageBytes    = 64 << 20
	DefaultMaxInitializeBytes = 64 << 10
	DefaultMaxQueuedInput     = 4 << 20
	DefaultMaxQueuedOutput    = 4 << 20
	DefaultWriteTimeout       = 60 * time.Second
	DefaultDetachTimeout      = 30 * time.Second
	DefaultKeepAlive          = 15 * time.Second
	DefaultHandshakeTimeout   = 10 * time.Second
)

// Transports, as Observer names them.
const (
	TransportWebSocket = "websocket"
	TransportHTTP      = "http"
)

// Handler serves the ACP endpoint. Mount it at /acp.
type Handler struct {
	o   Options
	log *slog.Logger

	ctx    context.Context // the base of every connection's context
	cancel context.CancelFunc
	wg     sync.WaitGroup // connections' goroutines

	open atomic.Int32 // ACP connections, both transports

	mu     sync.Mutex
	conns  map[string]*httpConn // HTTP connections by id
	ws     map[*wsConn]struct{}
	closed bool

	// Limits hit by requests that belong to no connection, logged once
	// per episode: set when hit, cleared by the next request that passes.
	loggedFull, loggedAuth, loggedInit, loggedHost, loggedSlow atomic.Bool
}

// NewHandler returns a handler; Options.Serve is required.
func NewHandler(o Options) (*Handler, error) {
	if o.Serve == nil {
		return nil, errors.New("remote: Options.Serve is required")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxConnections, DefaultMaxConnections)
	def(&o.MaxStreams, DefaultMaxStreams)
	def(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&o.MaxInitializeBytes, DefaultMaxInitializeBytes)
	def(&o.MaxQueuedInput, DefaultMaxQueuedInput)
	def(&o.MaxQueuedOutput, DefaultMaxQueuedOutput)
	defDur(&o.WriteTimeout, DefaultWriteTimeout)
	defDur(&o.DetachTimeout, DefaultDetachTimeout)
	defDur(&o.KeepAlive, DefaultKeepAlive)
	defDur(&o.HandshakeTimeout, DefaultHandshakeTimeout)
	settingnames.Fill(&o.Settings)
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{o: o, log: log, ctx: ctx, cancel: cancel, conns: map[string]*httpConn{}, ws: map[*wsConn]struct{}{}}, nil
}

type nopObserver struct{}

func (nopObserver) ConnOpened(string) {}
func (nopObserver) ConnClosed(string) {}
func (nopObserver) LimitHit(string)   {}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		if isUpgrade(r) {
			h.serveWebSocket(w, r)
			return
		}
		h.serveStream(w, r)
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		textError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// authorized checks the bearer token, answering 401 or 403 when it is
// missing or wrong. Without a token, the peer is whoever reaches the
// listener, which is safe on loopback only, and only for requests
// addressed to loopback: a web page on a name its owner points at
// 127.0.0.1 (DNS rebinding) is same-origin for the browser and would
// otherwise drive the agent. Those are answered 403.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.o.Token == "" {
		if loopbackHost(r.Host) {
			h.loggedHost.Store(false)
			return true
		}
		h.o.Observer.LimitHit("auth")
		if !h.loggedHost.Swap(true) {
			h.log.Warn("refusing requests not addressed to loopback: a listener without a token serves only those", "host", r.Host, "peer", r.RemoteAddr)
		}
		textError(w, http.StatusForbidden, "this listener has no token and serves only requests addressed to a loopback host (localhost, 127.0.0.1, [::1])")
		return false
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	bearer := ok && strings.EqualFold(scheme, "Bearer")
	if bearer && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(h.o.Token)) == 1 {
		h.loggedAuth.Store(false)
		if h.o.Authenticated != nil {
			h.o.Authenticated(r)
		}
		return true
	}
	h.o.Observer.LimitHit("auth")
	if h.o.AuthFailed != nil && h.o.AuthFailed(r) {
		w.Header().Set("Connection", "close")
	}
	if !h.loggedAuth.Swap(true) {
		h.log.Warn("refusing requests without the right bearer token", "peer", r.RemoteAddr, "token_given", bearer)
	}
	if !bearer {
		w.Header().Set("WWW-Authenticate", `Bearer realm="dshd"`)
		textError(w, http.StatusUnauthorized, "a bearer token is required")
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="dshd", error="invalid_token"`)
	textError(w, http.StatusForbidden, "the bearer token is not valid")
	return false
}

// admit counts a new ACP connection, or answers 503 and reports false.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	if h.o.Accepting != nil && !h.o.Accepting() {
		w.Header().Set("Retry-After", "1")
		textError(w, http.StatusServiceUnavailable, "the daemon is draining and takes no new connections")
		return false
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		textError(w, http.StatusServiceUnavailable, "the daemon is shutting down")
		return false
	}
	if int(h.open.Add(1)) > h.o.MaxConnections {
		h.open.Add(-1)
		h.o.Observer.LimitHit("connections")
		if !h.loggedFull.Swap(true) {
			h.log.Warn("refusing ACP connections: the limit is reached", "setting", h.o.Settings.MaxConnections, "limit", h.o.MaxConnections, "peer", r.RemoteAddr)
		}
		w.Header().Set("Retry-After", "1")
		textError(w, http.StatusServiceUnavailable, "too many connections")
		return false
	}
	h.loggedFull.Store(false)
	return true
}

func (h *Handler) release() { h.open.Add(-1) }

// setAffinity adds the affinity cookie to a response.
func (h *Handler) setAffinity(w http.ResponseWriter) {
	if h.o.AffinityCookie == "" || h.o.AffinityValue == "" {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: h.o.AffinityCookie, Value: h.o.AffinityValue, Path: "/", HttpOnly: true, Secure: h.o.Secure, SameSite: http.SameSiteLaxMode})
}

// serveWebSocket upgrades the request and serves one ACP connection on
// the socket until either side ends it.
func (h *Handler) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r) {
		return
	}
	defer h.release()
	id := newID()
	w.Header().Set(HeaderConnectionID, id)
	h.setAffinity(w)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
		OriginPatterns:  h.o.OriginPatterns,
	})
	if err != nil {
		h.log.Debug("websocket upgrade failed", "peer", r.RemoteAddr, "err", err)
		return
	}
	c := newWSConn(ws, addrOf(r))
	if !h.trackWS(c, true) {
		_ = c.Close()
		return
	}
	defer h.trackWS(c, false)
	h.o.Observer.ConnOpened(TransportWebSocket)
	defer h.o.Observer.ConnClosed(TransportWebSocket)
	h.wg.Go(func() { c.keepalive(h.o.KeepAlive) })
	// The connection's context ends with the socket, so a turn running
	// when the client goes away is cancelled at once, not at its next
	// write.
	ctx, cancel := context.WithCancel(h.ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	defer cancel()
	h.log.Debug("websocket connection", "conn", id, "peer", r.RemoteAddr)
	_ = h.o.Serve(ctx, &served{ReadWriteCloser: c, remote: c.remote, authed: h.o.Token != ""})
	_ = c.Close()
}

func (h *Handler) trackWS(c *wsConn, add bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !add {
		delete(h.ws, c)
		h.wg.Done()
		return true
	}
	if h.closed {
		return false
	}
	h.ws[c] = struct{}{}
	h.wg.Add(1) // under mu, so Close's Wait never races it
	return true
}

// Close ends every connection: their contexts are cancelled (the agent
// cancels their turns and ends them), then their sockets and streams
// close. It returns when every connection has ended, or cuts the rest off
// when ctx is done first and returns an error saying how many, wrapping
// ctx's.
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	conns := make([]*httpConn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	wss := make([]*wsConn, 0, len(h.ws))
	for c := range h.ws {
		wss = append(wss, c)
	}
	h.mu.Unlock()
	// Cancelling the connections' contexts lets the agent end each one
	// itself, writing what it still has (the answers of cancelled turns)
	// before the transport closes; whatever is left at ctx's end is cut.
	h.cancel()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		h.mu.Lock()
		left := len(h.conns) + len(h.ws)
		h.mu.Unlock()
		for _, c := range conns {
			c.close("the daemon is shutting down")
		}
		for _, c := range wss {
			_ = c.ws.CloseNow()
		}
		return fmt.Errorf("remote: cut off %d connections that had not ended: %w", left, ctx.Err())
	}
}

// served is the rwc a connection is served on.
type served struct {
	io.ReadWriteCloser
	remote net.Addr
	authed bool
}

// PeerAuthenticated reports whether the transport authenticated the peer
// (its bearer token was right), so the agent need not ask again.
func (s *served) PeerAuthenticated() bool { return s.authed }

// RemoteAddr names the peer in logs.
func (s *served) RemoteAddr() net.Addr { return s.remote }

// loopbackHost reports whether a Host header names this machine's
// loopback: an IP address in 127.0.0.0/8 or ::1, localhost, or a name
// under .localhost (which resolves to loopback, RFC 6761).
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "websocket") {
				return true
			}
		}
	}
	return false
}

// addr is a remote address as net/http reports it.
type addr string

func (a addr) Network() string { return "tcp" }
func (a addr) String() string  { return string(a) }

func addrOf(r *http.Request) net.Addr { return addr(r.RemoteAddr) }

func textError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
