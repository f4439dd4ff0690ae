// This file implements a connection to an agent: starting or dialling it,
// the initialize/authenticate handshake, and noticing its end.

package acpprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/remote"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/within"
)

// Handshake details.
const (
	// authTokenMethod and metaToken are how a dshd socket daemon takes its
	// token (acp/server/initialize.go).
	authTokenMethod = "token"
	metaToken       = "dshd.dev/token"
	// drainAfterExit is how long the output of a child that exited may
	// take to arrive before the connection is closed (a helper it left
	// may hold stdout open).
	drainAfterExit = 500 * time.Millisecond
)

// peer is one connection to an agent: a child process's stdio, or a
// socket shared by the runs of one pool key. It serves the agent's
// requests (it is the acp.Client) by routing them to the child session
// they name.
type peer struct {
	p     *Provider
	t     *target
	key   string // pool key; "" for a stdio child
	conn  *rpc.ClientSideConn
	rwc   io.ReadWriteCloser // what conn runs on
	proc  *process           // nil for a socket
	check *lineCheck
	caps  acp.ClientCapabilities // what we advertised
	init  *acp.InitializeResponse
	log   *slog.Logger

	// slots holds a token per request of the agent's being served
	// (MaxRequests); loggedSlots is set once they were all taken.
	slots       chan struct{}
	loggedSlots atomic.Bool
	load        loadCount
	reads       readBudget

	closing  atomic.Bool // closed by us
	shutOnce sync.Once
	dead     chan struct{} // closed when the connection ended
	reason   string        // why it ended; written before dead is closed
	watched  chan struct{} // the watcher goroutine ended

	mu     sync.Mutex
	routes map[acp.SessionID]*route     // agent-side session id → route
	held   map[acp.SessionID]*heldQueue // updates waiting for an unknown id
	nheld  int                          // updates in held
	// heldBytes is their size; heldFull is set once an update was
	// dropped for the bound (Options.MaxHeld, heldBytesLimit).
	heldBytes int
	heldFull  bool
	sweptAt   time.Time     // the last sweep of expired held updates
	changed   chan struct{} // closed and replaced whenever a route is added
	sessions  int           // sessions open on it (pool accounting)
}

var _ acp.Client = (*peer)(nil)

// newPeer returns a peer for t with its channels and maps made, not yet
// connected.
func (p *Provider) newPeer(t *target) *peer {
	return &peer{
		p: p, t: t,
		log:     p.log.With("agent", t.label),
		dead:    make(chan struct{}),
		watched: make(chan struct{}),
		slots:   make(chan struct{}, p.o.MaxRequests),
		reads:   readBudget{size: max(cmp.Or(p.o.Limits.MaxQueuedOutput, rpc.DefaultMaxQueuedOutput), p.o.MaxReadBytes)},
		routes:  map[acp.SessionID]*route{},
		held:    map[acp.SessionID]*heldQueue{},
		changed: make(chan struct{}),
	}
}

// connect starts or dials t and runs the handshake under ctx. roots are a
// stdio child's workspace: its working directory first, then the
// additional directories.
func (p *Provider) connect(ctx context.Context, t *target, caps acp.ClientCapabilities, roots []string, key string) (*peer, error) {
	pr := p.newPeer(t)
	pr.key, pr.caps = key, caps
	var rwc io.ReadWriteCloser
	if t.stdio() {
		proc, err := p.startProcess(t, roots)
		if err != nil {
			return nil, err
		}
		pr.proc = proc
		pr.check = &lineCheck{r: proc.child.Stdout}
		rwc = &stdioConn{r: pr.check, pr: proc}
	} else if t.network == "remote" {
		c, err := remote.Dial(ctx, t.address, &remote.DialOptions{Token: t.token, Client: p.httpClient(t.address), Logger: pr.log})
		if err != nil {
			return nil, fmt.Errorf("cannot reach it: %w", err) // err names the URL
		}
		pr.check = &lineCheck{r: c}
		rwc = &remoteConn{ReadWriteCloser: c, r: pr.check}
	} else {
		var d net.Dialer
		nc, err := d.DialContext(ctx, t.network, t.address)
		if err != nil {
			return nil, fmt.Errorf("cannot reach it: %w", err) // "dial unix PATH: …"
		}
		pr.check = &lineCheck{r: nc}
		rwc = &netConn{Conn: nc, r: pr.check}
	}
	pr.rwc = rwc
	lim := pr.p.o.Limits
	lim.IdleTimeout = -1 // an agent may think for as long as its task takes
	pr.conn = rpc.NewClientSideConn(rwc, pr, &rpc.ConnOptions{Logger: pr.log, Limits: lim})
	go pr.watch()
	if err := pr.handshake(ctx); err != nil {
		pr.shutdown()
		return nil, err
	}
	return pr, nil
}

// gonePeer stands for the connection of a child restored from a
// snapshot: it has ended (so a resume reconnects), and it remembers the
// agent's capabilities that reconnecting needs.
func (p *Provider) gonePeer(t *target, init *acp.InitializeResponse) *peer {
	pr := p.newPeer(t)
	pr.init = init
	pr.reason = "the connection ended before the daemon restarted"
	close(pr.dead)
	close(pr.watched)
	return pr
}

// netConn is a socket whose reads are checked for garbage.
type netConn struct {
	net.Conn
	r *lineCheck
}

func (c *netConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// remoteConn is a connection over ACP's remote transport whose reads are
// checked for garbage.
type remoteConn struct {
	io.ReadWriteCloser
	r *lineCheck
}

func (c *remoteConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// handshake runs initialize and, for a daemon that asks for its token,
// authenticate.
func (pr *peer) handshake(ctx context.Context) error {
	resp, err := pr.conn.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersion1,
		ClientCapabilities: pr.caps,
		ClientInfo:         &acp.Implementation{Name: pr.p.o.ClientName, Version: pr.p.o.Version},
	})
	if err != nil {
		return pr.callError(ctx, "initialize", err)
	}
	if resp.ProtocolVersion != acp.ProtocolVersion1 {
		return fmt.Errorf("the agent speaks ACP version %d; dshd speaks version 1", resp.ProtocolVersion)
	}
	pr.init = resp
	wantsToken := false
	for _, m := range resp.AuthMethods {
		if a, ok := m.(*acp.AuthMethodAgent); ok && a.ID == authTokenMethod {
			wantsToken = true
		}
	}
	if wantsToken && pr.t.token != "" {
		_, err := pr.conn.Authenticate(ctx, &acp.AuthenticateRequest{
			MethodID: authTokenMethod,
			Meta:     acp.Meta{metaToken: pr.t.token},
		})
		if err != nil {
			return pr.callError(ctx, "authenticate", err)
		}
	}
	return nil
}

// callError words a failed call made while starting.
func (pr *peer) callError(ctx context.Context, method string, err error) error {
	var ae *acp.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return fmt.Errorf("the agent did not answer %s within %s%s", method, pr.t.startTimeout, pr.stderrSuffix())
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, acp.ErrConnClosed):
		return fmt.Errorf("the agent ended before answering %s: %s", method, pr.endReason(time.Second))
	case errors.Is(err, acp.ErrAuthRequired):
		return fmt.Errorf("the agent requires authentication (%s): log it in or give it its credentials (the binding's env=, or token=/token-env= for a dshd socket daemon)", wireMessage(err))
	case errors.As(err, &ae):
		return fmt.Errorf("the agent refused %s: %s", method, wireMessage(err))
	}
	return fmt.Errorf("%s failed: %w", method, err)
}

// watch notices the end of the connection: the peer closed it, it broke,
// or the child process exited (a helper may keep its stdout open, so the
// connection is closed after a short drain).
func (pr *peer) watch() {
	defer close(pr.watched)
	var exited <-chan struct{}
	if pr.proc != nil {
		exited = pr.proc.child.Exited()
	}
	select {
	case <-pr.conn.Done():
	case <-exited:
		if !within.Closed(pr.conn.Done(), drainAfterExit) {
			pr.conn.Close()
		}
	}
	pr.reason = pr.describeEnd()
	if !pr.closing.Load() {
		pr.log.Warn("agent connection ended", "reason", pr.reason)
	}
	close(pr.dead)
}

// describeEnd says why the connection ended.
func (pr *peer) describeEnd() string {
	if g := pr.check.garbage(); g != "" {
		return fmt.Sprintf("the agent wrote something that is not ACP on stdout: %q", scrub(g))
	}
	if pr.closing.Load() {
		return "the connection to the agent was closed"
	}
	if pr.proc != nil {
		if within.Closed(pr.proc.child.Exited(), drainAfterExit) {
			return "the agent process " + pr.proc.exitDescription()
		}
		return "the agent process closed its stdout"
	}
	if rc, ok := pr.rwc.(*remoteConn); ok {
		if e, ok := rc.ReadWriteCloser.(interface{ Err() error }); ok && e.Err() != nil {
			return fmt.Sprintf("the connection to the agent at %s was lost: %v", pr.t.where(), e.Err())
		}
	}
	return fmt.Sprintf("the connection to the agent at %s was lost", pr.t.where())
}

// endReason waits up to d for the connection's end and returns its reason
// with the tail of the child's stderr.
func (pr *peer) endReason(d time.Duration) string {
	if !within.Closed(pr.dead, d) {
		return "the connection to the agent failed"
	}
	return pr.reason + pr.stderrSuffix()
}

// stderrSuffix is the tail of a child's stderr and, for a confined child,
// the sandbox it ran in and what that refused it, formatted to follow a
// sentence, or "".
func (pr *peer) stderrSuffix() string {
	if pr.proc == nil {
		return ""
	}
	tail := pr.proc.stderrTail(250 * time.Millisecond)
	note := pr.proc.sandboxNote()
	switch {
	case tail == "" && note == "":
		return ""
	case tail == "":
		return ". " + note
	case note == "":
		return "; its stderr ends with:\n" + tail
	}
	return "; its stderr ends with:\n" + tail + "\n" + note
}

// alive reports whether the connection still works.
func (pr *peer) alive() bool {
	select {
	case <-pr.dead:
		return false
	default:
		return true
	}
}

// shutdown closes the connection and, for a child process, ends it and
// its group. It returns once every goroutine of the peer has ended.
func (pr *peer) shutdown() {
	pr.shutOnce.Do(func() {
		pr.closing.Store(true)
		if pr.conn == nil {
			return // a restored child's placeholder: nothing was opened
		}
		pr.conn.Close()
		<-pr.watched
		if pr.proc != nil {
			pr.proc.stop(pr.p.o.EOFGrace, pr.p.o.TermGrace)
		}
	})
}

// sessionCaps are the agent's session capabilities.
func (pr *peer) sessionCaps() acp.SessionCapabilities {
	if pr.init == nil {
		return acp.SessionCapabilities{}
	}
	return pr.init.AgentCapabilities.SessionCapabilities
}

// sameHost reports whether the agent shares this machine's file system,
// so paths it names (a child's cwd) mean the same thing here.
func (pr *peer) sameHost() bool {
	var host string
	switch pr.t.network {
	case "tcp":
		h, _, err := splitHostPort(pr.t.address)
		if err != nil {
			return false
		}
		host = h
	case "remote":
		u, err := url.Parse(pr.t.address)
		if err != nil {
			return false
		}
		host = u.Hostname()
	default:
		return true
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
