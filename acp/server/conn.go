// This file defines Conn, one client connection: its capabilities, its
// open sessions, and the ordered path every update takes to the client.

package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"

	"github.com/dshd/dshd/acp/rpc"
)

// Conn serves one client connection. One exists per accepted connection
// (or one for stdio); it implements acp.Agent.
type Conn struct {
	srv  *Server
	log  *slog.Logger
	peer *rpc.AgentSideConn
	// ctx is the connection's lifetime: turns derive from it, so a
	// disconnect cancels them.
	ctx    context.Context
	cancel context.CancelFunc

	initialized atomic.Bool
	// trusted connections were authenticated by their transport.
	trusted bool

	mu       sync.Mutex
	caps     acp.ClientCapabilities
	authed   bool
	sessions map[acp.SessionID]*session.Session
	children map[acp.SessionID]*child // exposed subagent sessions
	// workspaces are what each session's workspace defines for it.
	workspaces map[acp.SessionID]*wsState
	nextID     uint64
	// idBase makes minted ids unique across connections, so a child id
	// replayed from an earlier connection is never minted again.
	idBase  string
	closing bool
	turns   sync.WaitGroup
	// opening counts the sessions being opened (reserveSession);
	// loggedSessions, that the limit on them was logged.
	opening        int
	loggedSessions bool
	peerName       string // the peer, for logs
	// loggedDirs is set once a request's additionalDirectories were
	// refused for their count (checkDirs), which is logged once.
	loggedDirs atomic.Bool
	// cloneSlot is held by the connection's one running checkout clone
	// (checkout.go).
	cloneSlot chan struct{}
}

var _ acp.Agent = (*Conn)(nil)

func newConn(s *Server, rwc io.ReadWriteCloser) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		srv:        s,
		log:        s.log,
		ctx:        ctx,
		cancel:     cancel,
		sessions:   map[acp.SessionID]*session.Session{},
		children:   map[acp.SessionID]*child{},
		workspaces: map[acp.SessionID]*wsState{},
		idBase:     randomBase(),
		trusted:    authenticatedByTransport(rwc),
		peerName:   rpc.PeerName(rwc),
		cloneSlot:  make(chan struct{}, 1),
	}
	c.authed = s.opts.Token == "" || c.trusted
	// The handlers send session/update through c.peer, so it is set
	// before the connection reads its first message.
	c.peer = rpc.PrepareAgentSideConn(rwc, c, &rpc.ConnOptions{Logger: s.log, Limits: s.opts.Limits, RequireAuth: !c.authed})
	c.peer.Start()
	return c
}

// shutdown cancels every turn, then closes the sessions: each Close waits
// for its turn to end, its end to be synced and its answer to be written
// before it closes the journal. Only then does the connection close.
func (c *Conn) shutdown() {
	c.mu.Lock()
	c.closing = true
	sessions := make([]*session.Session, 0, len(c.sessions))
	for id, s := range c.sessions {
		sessions = append(sessions, s)
		delete(c.sessions, id)
	}
	c.mu.Unlock()
	c.cancel()
	for _, s := range sessions {
		c.closeSession(s)
	}
	c.turns.Wait()
	c.peer.Close()
}

// closeSession cancels the session's turn, waits for it, then frees the
// session's resources. The error says what of the session could not be
// saved (see [session.Session.Close]): it is closed all the same.
func (c *Conn) closeSession(s *session.Session) error {
	err := s.Close()
	if err != nil {
		c.log.Warn("session closed without saving its last records; a load has it as last saved", "session", s.ID(), "err", err)
	}
	c.mu.Lock()
	ws := c.workspaces[acp.SessionID(s.ID())]
	delete(c.workspaces, acp.SessionID(s.ID()))
	c.mu.Unlock()
	ws.close()
	c.srv.release(acp.SessionID(s.ID()), c)
	return err
}

// optedIn reports whether the client asked to see subagent sessions.
func (c *Conn) optedIn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps.Subagents != nil
}

func (c *Conn) clientCaps() acp.ClientCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}

// lookup finds an open session. A child id is refused with -32602 (a
// client may not drive a subagent session); anything else unknown is
// -32002.
func (c *Conn) lookup(id acp.SessionID) (*session.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authed {
		return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": "authenticate with the daemon token first"})
	}
	if s, ok := c.sessions[id]; ok {
		return s, nil
	}
	if _, ok := c.children[id]; ok || isChildID(id) {
		return nil, childRefused(id)
	}
	return nil, notFound(id)
}

func notFound(id acp.SessionID) error {
	return acp.ErrResourceNotFound.WithData(map[string]any{"sessionId": id})
}

func childRefused(id acp.SessionID) error {
	return acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "subagent session"})
}

// isChildID reports whether id has the shape of a minted child id; the
// server refuses any client attempt to open or name one.
func isChildID(id acp.SessionID) bool { return strings.Contains(string(id), "/") }

// send writes one update for session id: journalled first (so everything
// the client saw survives a crash), then written through the connection's
// single ordered writer. journal may be nil (nothing recorded).
func (c *Conn) send(journal *session.Session, id acp.SessionID, u acp.SessionUpdate) {
	b := c.encode(id, u)
	if b == nil {
		return
	}
	if journal != nil {
		// An update that cannot be saved is still sent: it stops the turn,
		// whose answer tells the client the turn was not saved.
		_ = journal.RecordUpdate(b)
	}
	if err := c.peer.SessionUpdateRaw(c.ctx, b); err != nil {
		c.log.Debug("session/update not delivered", "session", id, "err", err)
	}
}

// encode returns the session/update params of u for session id, or nil
// when u cannot be encoded (logged: it is our bug, not the client's).
func (c *Conn) encode(id acp.SessionID, u acp.SessionUpdate) []byte {
	b, err := acp.MarshalSessionNotification(&acp.SessionNotification{SessionID: id, Update: u})
	if err != nil {
		c.log.Error("cannot encode a session update", "session", id, "update", u.UpdateType(), "err", err)
		return nil
	}
	return b
}

// sendRaw writes a recorded or relayed notification (params JSON) as is.
func (c *Conn) sendRaw(params json.RawMessage) {
	if err := c.peer.Notify(c.ctx, acp.MethodSessionUpdate, params); err != nil {
		c.log.Debug("session/update not delivered", "err", err)
	}
}

func randomBase() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// holdTurn counts one more piece of work shutdown waits for (a turn, a
// watcher), and reports false, counting nothing, once the connection is
// closing. The caller ends the count with c.turns.Done.
func (c *Conn) holdTurn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.turns.Add(1)
	return true
}

// mintID returns a connection-unique counter value.
func (c *Conn) mintID() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return c.nextID
}
