// pipe.go: the inbound side of a Streamable HTTP connection — POST bodies
// queued as lines for the agent's reader, bounded in bytes.

package remote

import (
	"context"
	"io"
	"sync"
)

// inPipe holds messages POSTed but not yet read by the agent. A put waits
// while the pipe holds max bytes (one message larger than max still goes
// in alone), so a client that posts faster than the agent reads is slowed
// down by its own requests, not buffered without end.
type inPipe struct {
	max int

	mu      sync.Mutex
	chunks  [][]byte
	off     int // read offset into chunks[0]
	size    int
	closed  bool
	changed chan struct{} // closed and replaced on every change
}

func newInPipe(max int) *inPipe { return &inPipe{max: max, changed: make(chan struct{})} }

func (p *inPipe) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Read implements io.Reader for the agent's stream.
func (p *inPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	for len(p.chunks) == 0 {
		if p.closed {
			p.mu.Unlock()
			return 0, io.EOF
		}
		ch := p.changed
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	n := 0
	for n < len(b) && len(p.chunks) > 0 {
		c := p.chunks[0][p.off:]
		k := copy(b[n:], c)
		n += k
		p.off += k
		if k == len(c) {
			p.chunks[0] = nil
			p.chunks = p.chunks[1:]
			p.off = 0
		}
	}
	p.size -= n
	p.broadcast()
	p.mu.Unlock()
	return n, nil
}

// put queues msg, which must end in a newline. It fails when ctx ends or
// the pipe is closed first.
func (p *inPipe) put(ctx context.Context, msg []byte) error {
	p.mu.Lock()
	for p.size > 0 && p.size+len(msg) > p.max && !p.closed {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	if p.closed {
		return io.ErrClosedPipe
	}
	p.chunks = append(p.chunks, msg)
	p.size += len(msg)
	p.broadcast()
	return nil
}

// close ends the pipe: the reader gets io.EOF after what was queued, and
// waiting puts fail.
func (p *inPipe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.broadcast()
	}
}
