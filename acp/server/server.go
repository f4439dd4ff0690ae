// Package server is dshd's ACP agent: it maps ACP methods onto sessions and
// is the only package that turns agent events into session/update
// notifications. For each method it decodes the request, finds the
// session and calls it; it builds no session itself — it hands
// agent/session's New a Config with the editor-side adapters (fs/*,
// terminal/*, the permission asker) and the subagent exposure.
//
// It also gives each session what its workspace defines (workspace.go):
// the agent definitions' tool layer (subagents/definition) under the
// session's own, and the slash commands (prompt/commands), advertised with
// available_commands_update and looked at again at each turn's start. A
// prompt that is a command becomes the command's prompt, or, for /compact
// and /agents, the turn runs the command instead of the model.
//
// A [Server] is the daemon: its options, the session store, the tools and
// subagent providers every session shares, and the set of live sessions. It
// serves any number of connections ([Server.ServeConn]), each with its own
// [Conn] and sessions: one on stdio, many on a socket ([Server.Serve]).
//
// Goroutines: a Conn's handlers run on the acp dispatcher; a prompt turn
// runs on its handler's goroutine after it detaches. ServeConn returns only
// after every turn of the connection has ended and every session it opened
// is closed, so nothing of a connection outlives it.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/prompt/commands"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/definition"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/tasks"
	"github.com/dshd/dshd/tools/workspace"

	"github.com/dshd/dshd/acp/rpc"
)

// Options configure a Server. Zero fields take the defaults documented on
// each.
type Options struct {
	// Name, Title and Version identify the agent in initialize.
	Name, Title, Version string

	// Store holds the session journals; required.
	Store *session.Store

	// Model is the model backend; required. DefaultModel is the model id
	// new sessions use. Models, when set, lists the models the model
	// selector offers (DefaultModel is always among them); it must return
	// at once.
	Model        llm.Model
	DefaultModel string
	Models       func() []llm.Info
	// ModelsReady, when set, is closed once Models has its final list (a
	// background GET /models ended, whatever its outcome); sessions whose
	// selector was sent before then get it again if the list changed. Nil:
	// Models' list is final from the start.
	ModelsReady <-chan struct{}
	// KeyEnv names the environment variable the backend needs a key from;
	// HasKey reports whether a key is known (the variable, or one `dshd
	// auth` stored). When HasKey returns false, initialize advertises an
	// auth method saying which variable to set and session/new answers
	// auth_required; a client with auth.terminal is also offered `dshd
	// auth` as a terminal method whenever KeyEnv is set.
	KeyEnv string
	HasKey func() bool

	// Tools is the daemon-wide tool layer (built-ins and subagent tools);
	// each session adds its own layer on top.
	Tools *tools.Registry
	// Subagents is the provider service the subagent tools use.
	Subagents *subagents.Service
	// Definitions, when set, gives each session the tools of its
	// workspace's (and the user's) agent definitions, in a layer between
	// Tools and the session's own.
	Definitions *definition.Library
	// UserCommands are the user's command file directories; every session
	// also reads its workspace's (prompt/commands), within Commands (zero:
	// its defaults).
	UserCommands []commands.Source
	Commands     commands.Limits
	// Instructions bound each session's AGENTS.md (zero: prompt's
	// defaults); one that is cut or not used is told to the user.
	Instructions prompt.InstructionsLimits
	// Reads bound each read of a session's local disk (zero: workspace's
	// defaults).
	Reads workspace.ReadLimits
	// Agents lists live agents.
	Agents *agent.Registry
	// Dirs bound the additionalDirectories of a session request (build.go).
	Dirs DirLimits

	// Mode is the permission mode of new sessions (default ask).
	Mode permission.Mode
	// MaxTurnRequests, MaxTokens and ContextWindow configure each
	// session's agent (0: the agent's defaults).
	MaxTurnRequests, MaxTokens, ContextWindow int
	// MaxTokensPerTurn bounds the tokens of each prompt turn together with
	// everything its subagents spend, in this process or another (0:
	// unbounded).
	MaxTokensPerTurn int
	// MaxDepth is the delegation tree's depth limit (default
	// subagents.DefaultMaxDepth; 0 forbids delegation). Set NoDelegation
	// for an explicit 0.
	MaxDepth     int
	NoDelegation bool
	// MaxSessionsPerConn caps the sessions one connection has open at
	// once (default DefaultMaxSessionsPerConn); one more is refused until
	// one closes. Each open session holds its agent, journal and tools.
	MaxSessionsPerConn int
	// Settings name MaxSessionsPerConn and CheckoutTimeout where a hit is
	// told.
	Settings Settings
	// CheckoutTimeout bounds the clone of a session on a checkout of its
	// own (checkout.go; default DefaultCheckoutTimeout).
	CheckoutTimeout time.Duration
	// Tasks are the limits of each session's background tasks: how many
	// run at once, the output each keeps, how long a settled one keeps
	// its child (tools/tasks; zero values are its defaults). Their
	// journal and restore are the session's.
	Tasks tasks.Options

	// Token, when set, is required through authenticate before any session
	// method (socket daemons on tcp).
	Token string
	// Limits bound what each connection may cost (rpc.Limits; zero fields
	// take its defaults).
	Limits rpc.Limits

	// Runner is the local fallback used when the client offers no
	// terminal methods (default: localrun.New). Without fs methods
	// a session reads and writes through its workspace.NewLocalFS.
	Runner tools.Runner

	// ConnectMCP connects a session's MCP servers into its tool layer; nil
	// connects none, and each entry is a warning for the client.
	ConnectMCP MCPConnector
	// MCPHTTP and MCPSSE say which MCP transports ConnectMCP supports; they
	// are advertised as mcpCapabilities.
	MCPHTTP, MCPSSE bool

	// SetupWarnings, when set, returns the daemon's own conditions every
	// session shows after its setup (new, load, resume, fork), through
	// [Conn.Warn]: commands that cannot be sandboxed, for one. It must
	// return at once.
	SetupWarnings func() []Warning

	// Logger receives the daemon's logs; nil discards.
	Logger *slog.Logger
	// Observer is told of sessions, turns and tool calls, for metrics;
	// nil: nobody (transport.go).
	Observer Observer
	// Now returns the time (tests); nil is time.Now.
	Now func() time.Time
}

func (o *Options) models() []llm.Info {
	if o.Models == nil {
		return nil
	}
	return o.Models()
}

// MCPConnector connects MCP servers for a session: it registers their
// tools in reg and returns a closer plus human-readable warnings for
// servers that could not be used.
type MCPConnector func(ctx context.Context, cwd string, dirs []string, servers []acp.McpServer, reg *tools.Registry) (closer func(), warnings []string)

// Server is the daemon.
type Server struct {
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	live  map[acp.SessionID]*Conn // open sessions and the connection that holds each
	conns map[*Conn]struct{}
	wg    sync.WaitGroup

	ops ops // draining and running turns (transport.go)

	// checkoutTimedOut is set once a checkout ran out of its time: the
	// bound is logged once (checkout.go).
	checkoutTimedOut atomic.Bool
}

// New returns a Server.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Model == nil {
		return nil, errors.New("server: Options.Store and Options.Model are required")
	}
	if opts.Name == "" {
		opts.Name = "dshd"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Mode == "" {
		opts.Mode = permission.ModeAsk
	}
	if opts.MaxSessionsPerConn <= 0 {
		opts.MaxSessionsPerConn = DefaultMaxSessionsPerConn
	}
	if opts.CheckoutTimeout <= 0 {
		opts.CheckoutTimeout = DefaultCheckoutTimeout
	}
	settingnames.Fill(&opts.Settings)
	if opts.MaxDepth == 0 && !opts.NoDelegation {
		opts.MaxDepth = subagents.DefaultMaxDepth
	}
	if opts.Tools == nil {
		opts.Tools = tools.NewRegistry(nil)
	}
	if opts.Agents == nil {
		opts.Agents = &agent.Registry{}
	}
	if opts.Runner == nil {
		opts.Runner = localrun.New(nil)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: log, live: map[acp.SessionID]*Conn{}, conns: map[*Conn]struct{}{}}, nil
}

// ServeConn serves one client connection until the peer goes away or ctx
// ends. On the way out it cancels the connection's turns, waits for them,
// and closes its sessions (journals flushed).
func (s *Server) ServeConn(ctx context.Context, rwc io.ReadWriteCloser) error {
	c := newConn(s, rwc)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	select {
	case <-c.peer.Done():
	case <-ctx.Done():
	}
	c.shutdown()
	return nil
}

// Serve accepts connections on l until ctx ends, serving each on its own
// goroutine, then waits for every connection to finish.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var err error
	for {
		nc, aerr := l.Accept()
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, net.ErrClosed) {
				err = fmt.Errorf("server: accept: %w", aerr)
			}
			break
		}
		s.wg.Go(func() {
			s.log.Debug("client connected", "remote", nc.RemoteAddr().String())
			_ = s.ServeConn(ctx, nc)
			nc.Close()
			s.log.Debug("client disconnected", "remote", nc.RemoteAddr().String())
		})
	}
	s.wg.Wait()
	return err
}

// claim marks id live on c; it fails when another connection holds it.
func (s *Server) claim(id acp.SessionID, c *Conn) error {
	began := time.Now()
	for {
		s.mu.Lock()
		other, ok := s.live[id]
		if !ok || other == c {
			s.live[id] = c
			s.mu.Unlock()
			if !ok {
				s.observer().SessionOpened()
			}
			return nil
		}
		released := s.ops.releasedLocked()
		s.mu.Unlock()
		// A connection that is ending (its client dropped) lets the
		// session go shortly; a reattach waits for that (transport.go).
		if !s.waitRelease(other, released, began) {
			return acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "the session is open on another connection"})
		}
	}
}

// reserve marks id live on c for a load; it fails when any connection,
// c included, holds it already.
func (s *Server) reserve(id acp.SessionID, c *Conn) error {
	began := time.Now()
	for {
		s.mu.Lock()
		other, ok := s.live[id]
		if !ok {
			s.live[id] = c
			s.mu.Unlock()
			s.observer().SessionOpened()
			return nil
		}
		if other == c {
			s.mu.Unlock()
			return acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "the session is already open on this connection"})
		}
		released := s.ops.releasedLocked()
		s.mu.Unlock()
		// A reattach after a drop waits for the dropped connection to let
		// the session go (transport.go).
		if !s.waitRelease(other, released, began) {
			return acp.ErrInvalidParams.WithData(map[string]any{"sessionId": id, "reason": "the session is open on another connection"})
		}
	}
}

func (s *Server) release(id acp.SessionID, c *Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[id] == c {
		delete(s.live, id)
		s.ops.broadcastReleaseLocked()
	}
}
