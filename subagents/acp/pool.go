// This file keeps one connection per socket daemon (and per set of
// advertised capabilities), shared by the runs that use it, re-dialled
// after it drops.

package acpprovider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/dshd/dshd/acp"
)

// errProviderClosed fails a start after Close.
var errProviderClosed = errors.New("the acp provider is closed")

// pool is the provider's socket connections.
type pool struct {
	p *Provider

	mu      sync.Mutex
	entries map[string]*poolEntry // guarded by mu
	closed  bool                  // guarded by mu
}

// poolEntry serialises dialling one key, so concurrent runs share one
// connection instead of racing to open several.
type poolEntry struct {
	mu   sync.Mutex
	peer *peer // guarded by mu
}

// poolKey identifies a shareable connection: the same daemon, token and
// advertised client capabilities (which are fixed per connection).
func poolKey(t *target, caps acp.ClientCapabilities) string {
	var b strings.Builder
	b.WriteString(t.network + "\x00" + t.address + "\x00" + t.token + "\x00")
	b.WriteString(strconv.FormatBool(caps.FS.ReadTextFile))
	b.WriteString(strconv.FormatBool(caps.Terminal))
	b.WriteString(strconv.FormatBool(caps.Subagents != nil))
	return b.String()
}

// acquire returns a live connection for t with one more session counted
// on it, dialling when there is none.
func (pl *pool) acquire(ctx context.Context, t *target, caps acp.ClientCapabilities) (*peer, error) {
	key := poolKey(t, caps)
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil, errProviderClosed
	}
	e := entry(&pl.entries, key)
	pl.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if pr := e.peer; pr != nil {
		if pr.alive() {
			pr.mu.Lock()
			pr.sessions++
			pr.mu.Unlock()
			return pr, nil
		}
		// A dropped connection: the runs still holding it shut it down
		// when they let go; an unused one goes now.
		e.peer = nil
		pr.mu.Lock()
		idle := pr.sessions == 0
		pr.mu.Unlock()
		if idle {
			pr.shutdown()
		}
	}
	pr, err := pl.p.connect(ctx, t, caps, nil, key)
	if err != nil {
		return nil, err
	}
	pl.mu.Lock()
	closed := pl.closed
	pl.mu.Unlock()
	if closed {
		pr.shutdown()
		return nil, errProviderClosed
	}
	pr.sessions = 1
	e.peer = pr
	return pr, nil
}

// release drops one session of a pooled connection; a dead one is shut
// down when its last session goes.
func (pl *pool) release(pr *peer) {
	pr.mu.Lock()
	pr.sessions--
	idle := pr.sessions == 0
	pr.mu.Unlock()
	if !idle || pr.alive() {
		return
	}
	pl.mu.Lock()
	e := pl.entries[pr.key]
	pl.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		if e.peer == pr {
			e.peer = nil
		}
		e.mu.Unlock()
	}
	pr.shutdown()
}

// close shuts every pooled connection down.
func (pl *pool) close() {
	pl.mu.Lock()
	pl.closed = true
	entries := pl.entries
	pl.entries = nil
	pl.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		pr := e.peer
		e.peer = nil
		e.mu.Unlock()
		if pr != nil {
			pr.shutdown()
		}
	}
}

// acquire returns a connection for t: a new child process for a stdio
// target (roots: its workspace, cwd first), the pooled connection for a
// socket.
func (p *Provider) acquire(ctx context.Context, t *target, caps acp.ClientCapabilities, roots []string) (*peer, error) {
	if !t.stdio() {
		return p.pool.acquire(ctx, t, caps)
	}
	pr, err := p.connect(ctx, t, caps, roots, "")
	if err != nil {
		return nil, err
	}
	pr.sessions = 1
	return pr, nil
}

// releasePeer drops a run's hold on its connection: a child process ends
// with its one session; a pooled connection stays for the next run.
func (p *Provider) releasePeer(pr *peer) {
	if pr.key != "" {
		p.pool.release(pr)
		return
	}
	pr.mu.Lock()
	pr.sessions--
	idle := pr.sessions <= 0
	pr.mu.Unlock()
	if idle {
		pr.shutdown()
	}
}
