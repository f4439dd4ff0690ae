// listener.go: the admitting listener — accept retries, connection
// limits, and the brake on sources that fail authentication.

package listen

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/internal/settingnames"
)

// Options configure a [Listener]. Zero fields take the defaults named on
// them.
type Options struct {
	// MaxConnections caps the connections open at once (default 1024).
	MaxConnections int
	// RequireAuth says connections start unauthenticated (a token
	// daemon); MaxUnauthenticated then caps those that have not
	// authenticated yet (default 64).
	RequireAuth        bool
	MaxUnauthenticated int
	// MaxAuthFailures is how many failed authentications from one source
	// earn it a penalty (default 3); AuthPenalty is the first penalty
	// (default 5 s), doubled with each further one up to an hour. While
	// penalised, the source's new connections are refused; a successful
	// authentication from it clears its record.
	MaxAuthFailures int
	AuthPenalty     time.Duration
	// Logger receives the limits hit, once per episode, with the peer.
	Logger *slog.Logger
	// Settings name the limits in those logs (the daemon's flags), so
	// that an operator knows what to raise.
	Settings Settings
	// Refuse, when set, tells a refused peer why in the words of the
	// protocol it speaks (an HTTP listener answers 503) and closes nc;
	// limit names the limit hit: "connections", "unauthenticated" or
	// "auth-penalty". Nil writes one JSON-RPC error line.
	Refuse func(nc net.Conn, limit, reason string)
	// now returns the time (tests); nil is time.Now.
	now func() time.Time
}

// Settings name the limits of [Options] in the logs of their hits, one
// field for each limit of the same name; an empty field is that name.
type Settings struct {
	MaxConnections, MaxUnauthenticated, AuthPenalty string
}

const (
	defaultMaxConnections     = 1024
	defaultMaxUnauthenticated = 64
	defaultMaxAuthFailures    = 3
	defaultAuthPenalty        = 5 * time.Second
	maxAuthPenalty            = time.Hour
	// maxSources bounds the brake's memory of failing sources.
	maxSources = 4096
)

// Listener is a net.Listener that admits connections under the limits of
// its Options. Its connections have Authenticated and AuthFailed methods
// for the ACP connection to call.
type Listener struct {
	inner net.Listener
	opts  Options
	log   *slog.Logger

	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	open     int
	unauthed int
	sources  map[string]*source
	// episodes already logged; cleared when the condition ends.
	loggedFull, loggedUnauthed, loggedAccept bool
	// loggedHandshake: a connection closed at its handshake deadline was
	// logged; loggedPreAuthLine: one that sent a line over the limit
	// before it authenticated. The next connection that authenticates
	// ends both episodes.
	loggedHandshake, loggedPreAuthLine bool
}

// source is what the brake remembers of one remote host.
type source struct {
	failures int       // since the last penalty
	strikes  int       // penalties so far
	until    time.Time // refused until then
	logged   bool      // this penalty was logged
}

// New wraps l.
func New(l net.Listener, opts Options) *Listener {
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = defaultMaxConnections
	}
	if opts.MaxUnauthenticated <= 0 {
		opts.MaxUnauthenticated = defaultMaxUnauthenticated
	}
	if opts.MaxAuthFailures <= 0 {
		opts.MaxAuthFailures = defaultMaxAuthFailures
	}
	if opts.AuthPenalty <= 0 {
		opts.AuthPenalty = defaultAuthPenalty
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	settingnames.Fill(&opts.Settings)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{inner: l, opts: opts, log: log, closed: make(chan struct{}), sources: map[string]*source{}}
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// Close implements net.Listener; it also ends a backoff wait in Accept.
func (l *Listener) Close() error {
	err := l.inner.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

// Accept implements net.Listener. It returns only an admitted connection
// or a permanent error: a temporary accept failure (out of descriptors, a
// connection aborted before it was accepted) is retried after a backoff
// of 5 ms doubling to 1 s, and a connection over a limit is refused and
// closed here.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		nc, err := l.inner.Accept()
		if err != nil {
			if !temporary(err) {
				return nil, err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			l.logAcceptFailure(err, delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-l.closed:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		l.acceptRecovered()
		if c := l.admit(nc); c != nil {
			return c, nil
		}
	}
}

// temporary reports whether an accept error is worth retrying: the
// process or system is out of descriptors, or the peer gave up first.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (l *Listener) logAcceptFailure(err error, delay time.Duration) {
	l.mu.Lock()
	first := !l.loggedAccept
	l.loggedAccept = true
	l.mu.Unlock()
	if first {
		l.log.Warn("accept failed; retrying with backoff", "err", err, "retry_in", delay)
	}
}

func (l *Listener) acceptRecovered() {
	l.mu.Lock()
	was := l.loggedAccept
	l.loggedAccept = false
	l.mu.Unlock()
	if was {
		l.log.Info("accepting connections again")
	}
}

// admit counts nc in, or refuses it and returns nil.
func (l *Listener) admit(nc net.Conn) *Conn {
	src := host(nc.RemoteAddr())
	now := l.opts.now()
	l.mu.Lock()
	var limit, reason string
	switch {
	case l.penalised(src, now):
		limit = "auth-penalty"
		s := l.sources[src]
		reason = fmt.Sprintf("too many failed authentications from %s; retry in %s", src, s.until.Sub(now).Round(time.Second))
		if !s.logged {
			s.logged = true
			l.log.Warn("refusing connections from a source that failed authentication", "setting", l.opts.Settings.AuthPenalty, "peer", nc.RemoteAddr().String(), "until", s.until)
		}
	case l.open >= l.opts.MaxConnections:
		limit = "connections"
		reason = fmt.Sprintf("too many connections (the limit is %d); try again later", l.opts.MaxConnections)
		if !l.loggedFull {
			l.loggedFull = true
			l.log.Warn("refusing connections: the connection limit is reached", "setting", l.opts.Settings.MaxConnections, "limit", l.opts.MaxConnections, "peer", nc.RemoteAddr().String())
		}
	case l.opts.RequireAuth && l.unauthed >= l.opts.MaxUnauthenticated:
		limit = "unauthenticated"
		reason = fmt.Sprintf("too many connections waiting to authenticate (the limit is %d); try again later", l.opts.MaxUnauthenticated)
		if !l.loggedUnauthed {
			l.loggedUnauthed = true
			l.log.Warn("refusing connections: the limit of unauthenticated connections is reached", "setting", l.opts.Settings.MaxUnauthenticated, "limit", l.opts.MaxUnauthenticated, "peer", nc.RemoteAddr().String())
		}
	}
	if reason != "" {
		l.mu.Unlock()
		if l.opts.Refuse != nil {
			l.opts.Refuse(nc, limit, reason)
		} else {
			refuse(nc, reason)
		}
		return nil
	}
	l.open++
	c := &Conn{Conn: nc, l: l, src: src}
	if l.opts.RequireAuth {
		l.unauthed++
		c.unauthed.Store(true)
	}
	l.mu.Unlock()
	return c
}

// penalised reports whether src is refused at now; under l.mu.
func (l *Listener) penalised(src string, now time.Time) bool {
	s := l.sources[src]
	return s != nil && now.Before(s.until)
}

// refuse writes one JSON-RPC error saying why, and closes nc.
func refuse(nc net.Conn, reason string) {
	line, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": acp.ErrInternal.WithData(map[string]any{"reason": reason}),
	})
	_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = nc.Write(append(line, '\n'))
	_ = nc.Close()
}

// host is the address a brake applies to: the IP of a TCP peer, the
// network name otherwise (every unix peer is one source).
func host(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	if a == nil {
		return ""
	}
	return a.Network()
}

// released is called once per connection when it closes.
func (l *Listener) released(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if c.unauthed.CompareAndSwap(true, false) {
		l.unauthed--
	}
	if l.open < l.opts.MaxConnections {
		l.loggedFull = false
	}
	if l.unauthed < l.opts.MaxUnauthenticated {
		l.loggedUnauthed = false
	}
}

// authenticated takes c out of the unauthenticated count, clears its
// source's record and ends an episode of handshake deadlines.
func (l *Listener) authenticated(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loggedHandshake, l.loggedPreAuthLine = false, false
	if c.unauthed.CompareAndSwap(true, false) {
		l.unauthed--
		if l.unauthed < l.opts.MaxUnauthenticated {
			l.loggedUnauthed = false
		}
	}
	delete(l.sources, c.src)
}

// authFailed counts a failure against c's source; every MaxAuthFailures
// of them the source is refused for a penalty that doubles each time.
func (l *Listener) authFailed(c *Conn) {
	now := l.opts.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sources[c.src]
	if s == nil {
		l.forgetExpired(now)
		s = &source{}
		l.sources[c.src] = s
	}
	s.failures++
	if s.failures < l.opts.MaxAuthFailures {
		return
	}
	penalty := min(l.opts.AuthPenalty<<min(s.strikes, 20), maxAuthPenalty)
	s.failures, s.strikes, s.logged = 0, s.strikes+1, false
	s.until = now.Add(penalty)
}

// forgetExpired keeps the brake's memory bounded: when it is full, sources
// whose penalty has passed are forgotten, and if that is not enough, any.
func (l *Listener) forgetExpired(now time.Time) {
	if len(l.sources) < maxSources {
		return
	}
	for k, s := range l.sources {
		if !now.Before(s.until) {
			delete(l.sources, k)
		}
	}
	for k := range l.sources {
		if len(l.sources) < maxSources {
			break
		}
		delete(l.sources, k)
	}
}

// handshakeExpired is c's handshake deadline. With closeNow it closes c,
// unless c has authenticated or ended by then, and reports whether it did;
// without, the caller closes it. It reports whether the close is the first
// of an episode, to be logged: the unauthenticated cap bounds how many
// such connections wait at once, not how often they come, and a line for
// each would be a peer writing the log. The close and the decision are
// made under l.mu, which the authentication that ends an episode takes
// too, so that a close counts in the episode it came in whichever
// goroutine runs first.
func (l *Listener) handshakeExpired(c *Conn, closeNow bool) (closed, first bool) {
	l.mu.Lock()
	closed = true
	if closeNow {
		// c.Conn's own Close: c.Close gives its slot back, under l.mu.
		closed = c.unauthed.Load() && c.Conn.Close() == nil
	}
	if closed {
		first = firstOfEpisode(&l.loggedHandshake)
	}
	l.mu.Unlock()
	if closeNow && closed {
		c.once.Do(func() { l.released(c) })
	}
	return closed, first
}

// preAuthLineExceeded reports whether a close for a line over the limit
// before authentication is the first of an episode, as handshakeExpired.
func (l *Listener) preAuthLineExceeded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return firstOfEpisode(&l.loggedPreAuthLine)
}

// firstOfEpisode sets the episode flag *logged and reports whether it was
// clear; under l.mu.
func firstOfEpisode(logged *bool) bool {
	first := !*logged
	*logged = true
	return first
}

// Conn is an admitted connection.
type Conn struct {
	net.Conn
	l        *Listener
	src      string
	unauthed atomic.Bool
	once     sync.Once
}

// Close closes the connection and gives its slot back.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.released(c) })
	return err
}

// Authenticated tells the listener the peer authenticated.
func (c *Conn) Authenticated() { c.l.authenticated(c) }

// HandshakeExpired tells the listener the connection is closed at its
// handshake deadline, and reports whether that is the first of an episode
// (to be logged); the next connection that authenticates ends it. The
// caller closes the connection.
func (c *Conn) HandshakeExpired() bool {
	_, first := c.l.handshakeExpired(c, false)
	return first
}

// ExpireHandshake closes the connection at its handshake deadline unless
// it has authenticated (or ended) by then, and reports whether it closed
// it and whether that close is the first of an episode, as
// HandshakeExpired; for a transport whose deadline is not the ACP
// connection's (the http(s) listener's bearer token).
func (c *Conn) ExpireHandshake() (closed, first bool) { return c.l.handshakeExpired(c, true) }

// PreAuthLineExceeded tells the listener the connection is closed for a
// line over the limit before it authenticated, and reports whether that
// is the first of an episode, as HandshakeExpired.
func (c *Conn) PreAuthLineExceeded() bool { return c.l.preAuthLineExceeded() }

// AuthFailed tells the listener the peer failed to authenticate.
func (c *Conn) AuthFailed() { c.l.authFailed(c) }
