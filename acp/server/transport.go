// transport.go: what the daemon's transports and its operation ask of the
// server — a connection whose transport authenticated the peer, whether a
// session exists, and draining before a shutdown.

package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/within"
)

// peerAuthenticator is implemented by a transport that authenticated its
// peer itself (the HTTP listener checks a bearer token before any
// message): its connection starts authenticated and is not offered the
// token method.
type peerAuthenticator interface{ PeerAuthenticated() bool }

// authenticatedByTransport reports whether rwc's transport vouches for its
// peer.
func authenticatedByTransport(rwc any) bool {
	pa, ok := rwc.(peerAuthenticator)
	return ok && pa.PeerAuthenticated()
}

// DefaultMaxSessionsPerConn is the default of Options.MaxSessionsPerConn.
const DefaultMaxSessionsPerConn = 1024

// Settings name the limits of [Options] that a connection enforces where
// a hit is logged or told to the client (the daemon's flags), one field
// for each limit of the same name; an empty field is that name.
type Settings struct {
	MaxSessionsPerConn, CheckoutTimeout string
}

// reserveSession takes one of the connection's session places for a
// session being opened, or refuses when they are all taken; a nil error
// must be followed by release once the session is open (or failed to
// open). The first refusal on a connection is logged with the peer.
func (c *Conn) reserveSession(id acp.SessionID) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refuseSessionLocked(id); err != nil {
		return nil, err
	}
	c.opening++
	return func() {
		c.mu.Lock()
		c.opening--
		c.mu.Unlock()
	}, nil
}

// sessionsFull is the refusal reserveSession would give a new session
// now, or nil: a session/new with a checkout asks it before a clone that
// may take minutes and gigabytes, and reserves its place after.
func (c *Conn) sessionsFull() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refuseSessionLocked("")
}

// refuseSessionLocked refuses session id a place when the connection's
// are all taken (an open session keeps its own), and logs the first
// refusal with the peer.
func (c *Conn) refuseSessionLocked(id acp.SessionID) error {
	limit := c.srv.opts.MaxSessionsPerConn
	if _, open := c.sessions[id]; open || len(c.sessions)+c.opening < limit {
		return nil
	}
	if !c.loggedSessions {
		c.loggedSessions = true
		c.log.Warn("refusing a session: the connection has the most sessions open it may have", "setting", c.srv.opts.Settings.MaxSessionsPerConn, "limit", limit, "peer", c.peerName)
	}
	return acp.ErrInvalidRequest.WithData(map[string]any{"reason": fmt.Sprintf(
		"this connection has %d sessions open, the most it may have (%s); close one with session/close, or open another connection", limit, c.srv.opts.Settings.MaxSessionsPerConn)})
}

// SessionExists reports whether id names a session of this daemon: open
// on a connection now, or in the store.
func (s *Server) SessionExists(id string) bool {
	s.mu.Lock()
	_, live := s.live[acp.SessionID(id)]
	s.mu.Unlock()
	return live || s.opts.Store.Exists(id)
}

// ops is the server's operating state: draining, its running turns, and
// the sessions connections let go.
type ops struct {
	draining atomic.Bool

	// released is closed and replaced whenever a session is released;
	// guarded by Server.mu.
	released chan struct{}

	mu      sync.Mutex
	running int
	idle    chan struct{} // closed when running drops to 0; nil while 0
}

// errDraining refuses new work while the daemon drains.
var errDraining = acp.ErrInternal.WithData(map[string]any{"reason": "the daemon is shutting down and takes no new sessions or turns; try another daemon"})

// Drain makes the server refuse new work: session/new, session/load,
// session/resume and session/prompt answer an error from now on. Turns
// already running go on; [Server.WaitTurns] waits for them.
func (s *Server) Drain() { s.ops.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.ops.draining.Load() }

// RunningTurns returns the number of prompt turns running now.
func (s *Server) RunningTurns() int {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return s.ops.running
}

// WaitTurns waits until no turn runs or ctx is done, and reports whether
// none runs.
func (s *Server) WaitTurns(ctx context.Context) bool {
	s.ops.mu.Lock()
	if s.ops.running == 0 {
		s.ops.mu.Unlock()
		return true
	}
	ch := s.ops.idle
	s.ops.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// refuseWhileDraining is the error for new work while draining, or nil.
func (s *Server) refuseWhileDraining() error {
	if s.ops.draining.Load() {
		return errDraining
	}
	return nil
}

// beginTurn counts a turn, or refuses it while draining; a nil error must
// be followed by endTurn.
func (s *Server) beginTurn() error {
	if err := s.refuseWhileDraining(); err != nil {
		return err
	}
	s.ops.mu.Lock()
	if s.ops.running == 0 {
		s.ops.idle = make(chan struct{})
	}
	s.ops.running++
	s.ops.mu.Unlock()
	return nil
}

func (s *Server) endTurn() {
	s.ops.mu.Lock()
	s.ops.running--
	if s.ops.running == 0 {
		close(s.ops.idle)
		s.ops.idle = nil
	}
	s.ops.mu.Unlock()
}

// CancelTurns cancels every running turn on every connection, as
// session/cancel would: each answers its prompt with cancelled and
// journals what it did. Connections stay open, so the answers reach
// their clients.
func (s *Server) CancelTurns() {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		sessions := make([]*session.Session, 0, len(c.sessions))
		for _, s := range c.sessions {
			sessions = append(sessions, s)
		}
		c.mu.Unlock()
		for _, s := range sessions {
			s.Cancel()
		}
	}
}

// reattachWait bounds how long a session held by a connection that is
// ending is waited for; noticeWait how long one held by a connection that
// seems alive is, in case its peer is gone and the transport has not
// noticed yet (a reattach can overtake the news of the drop).
const (
	reattachWait = 10 * time.Second
	noticeWait   = 2 * time.Second
)

func (o *ops) releasedLocked() chan struct{} {
	if o.released == nil {
		o.released = make(chan struct{})
	}
	return o.released
}

func (o *ops) broadcastReleaseLocked() {
	if o.released != nil {
		close(o.released)
		o.released = nil
	}
}

// waitRelease waits for the next release, and reports whether it is worth
// trying the claim begun at began again: a holder that is ending is
// waited for up to reattachWait, one that seems alive up to noticeWait.
func (s *Server) waitRelease(holder *Conn, released <-chan struct{}, began time.Time) bool {
	holder.mu.Lock()
	ending := holder.closing
	holder.mu.Unlock()
	limit := noticeWait
	if ending {
		limit = reattachWait
	}
	wait := limit - time.Since(began)
	if wait <= 0 {
		return false
	}
	return within.Closed(released, wait)
}

// Observer is told what the server does, for metrics. Its methods must
// return at once.
type Observer interface {
	// SessionOpened counts a session opened on a connection (new, load
	// or resume).
	SessionOpened()
	// TurnEnded counts a prompt turn with its stop reason and duration;
	// err is the failure of a turn that failed.
	TurnEnded(stopReason string, d time.Duration, err error)
	// ToolCallEnded counts a tool call that completed or failed.
	ToolCallEnded(status string)
}

type nopObserver struct{}

func (nopObserver) SessionOpened()                         {}
func (nopObserver) TurnEnded(string, time.Duration, error) {}
func (nopObserver) ToolCallEnded(string)                   {}

func (s *Server) observer() Observer {
	if s.opts.Observer == nil {
		return nopObserver{}
	}
	return s.opts.Observer
}

// Connections returns the connections served now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// LiveSessions returns the sessions open on a connection now.
func (s *Server) LiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
