// outbox.go: the stream's bounded queue of lines waiting to be written, and
// the one goroutine that writes them (design.md "Bounded": a peer that
// does not read costs a bounded amount of memory).

package rpc

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dshd/dshd/acp"
)

// chunkSize is the size of the buffers small lines are copied into; a
// burst of notifications leaves in few writes.
const chunkSize = 32 << 10

// refThreshold is the size from which a line handed over with ref is
// queued by reference instead of copied.
const refThreshold = 64 << 10

// maxWrite bounds one Write call, so a stalled peer is noticed within one
// WriteTimeout even in the middle of a large message.
const maxWrite = 64 << 10

var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// segment is one piece of queued output: a pooled chunk filled with small
// lines, or a large line by reference.
type segment struct {
	b     []byte
	chunk *[chunkSize]byte // non-nil for a pooled chunk
}

// outbox queues output for w. Writers block while the queue holds more
// than max bytes (a single line larger than max is still queued when the
// queue is empty), so memory stays bounded whatever the peer does.
type outbox struct {
	w     io.Writer
	max   int
	stall time.Duration // 0: never give up on a peer
	// onBroken runs once when a write fails, or made no progress for
	// stall (err is then errStalled); it closes the connection.
	onBroken func(err error)
	// onDrain runs after each batch leaves, outside the lock; the stream
	// uses it to resume reading.
	onDrain func()

	mu      sync.Mutex
	room    sync.Cond // signalled when bytes leave or the outbox closes
	ready   sync.Cond // signalled when bytes arrive or the outbox closes
	segs    []segment
	spare   []segment
	open    bool // the last segment is a chunk that still takes lines
	size    int  // bytes queued and not yet written
	err     error
	closing bool          // no new lines; the writer drains then exits
	done    chan struct{} // closed when the writer goroutine ends
	failed  chan struct{} // closed by the first fail
}

// errStalled is the failure of a peer that took none of our output for the
// write timeout.
var errStalled = fmt.Errorf("%w: the peer stopped reading", acp.ErrConnClosed)

func newOutbox(w io.Writer, max int, stall time.Duration, onBroken func(error), onDrain func()) *outbox {
	o := &outbox{w: w, max: max, stall: stall, onBroken: onBroken, onDrain: onDrain,
		done: make(chan struct{}), failed: make(chan struct{})}
	o.room.L = &o.mu
	o.ready.L = &o.mu
	go o.run()
	return o
}

// put queues head, body and tail as one line, waiting while the queue is
// full. head and tail are always copied (so a caller's small buffer for
// them stays on its stack); with ref, a large body is queued without a
// copy, and the caller must not change it afterwards. It fails with the
// outbox's error once the outbox is closing or broken.
func (o *outbox) put(head, body, tail []byte, ref bool) error {
	n := len(head) + len(body) + len(tail)
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.err == nil && !o.closing && o.size > 0 && o.size+n > o.max {
		o.room.Wait()
	}
	if o.err != nil {
		return o.err
	}
	if o.closing {
		return acp.ErrConnClosed
	}
	wake := o.size == 0
	o.size += n
	o.copyIn(head)
	if ref && len(body) >= refThreshold {
		o.segs = append(o.segs, segment{b: body})
		o.open = false
	} else {
		o.copyIn(body)
	}
	o.copyIn(tail)
	if wake {
		o.ready.Signal()
	}
	return nil
}

// copyIn appends p to the open chunk, opening new ones as they fill.
func (o *outbox) copyIn(p []byte) {
	for len(p) > 0 {
		if !o.open || len(o.segs[len(o.segs)-1].b) == chunkSize {
			c := chunkPool.Get().(*[chunkSize]byte)
			o.segs = append(o.segs, segment{b: c[:0], chunk: c})
			o.open = true
		}
		last := &o.segs[len(o.segs)-1]
		m := copy(last.b[len(last.b):chunkSize], p)
		last.b = last.b[:len(last.b)+m]
		p = p[m:]
	}
}

// congested reports whether the queue is over its bound.
func (o *outbox) congested() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.size >= o.max
}

// run is the writer goroutine: it takes whatever is queued and writes it,
// until the outbox is closed and drained, or a write fails.
func (o *outbox) run() {
	defer close(o.done)
	var stalled *time.Timer
	if o.stall > 0 {
		stalled = time.AfterFunc(time.Hour, func() {
			if o.fail(errStalled) {
				o.onBroken(errStalled)
			}
		})
		stalled.Stop()
		defer stalled.Stop()
	}
	for {
		o.mu.Lock()
		for len(o.segs) == 0 && !o.closing && o.err == nil {
			o.ready.Wait()
		}
		if o.err != nil || len(o.segs) == 0 {
			o.mu.Unlock()
			return
		}
		batch := o.segs
		o.segs, o.spare = o.spare[:0], nil
		o.open = false
		o.mu.Unlock()

		n, err := o.writeBatch(batch, stalled)
		for i := range batch {
			if batch[i].chunk != nil {
				chunkPool.Put(batch[i].chunk)
			}
			batch[i] = segment{}
		}

		o.mu.Lock()
		o.size -= n
		first := false
		if err != nil {
			first = o.failLocked(fmt.Errorf("%w: %w", acp.ErrConnClosed, err))
		}
		if o.spare == nil && cap(batch) <= 1024 {
			o.spare = batch[:0]
		}
		o.room.Broadcast()
		o.mu.Unlock()
		o.onDrain()
		if err != nil {
			if first {
				o.onBroken(err)
			}
			return
		}
	}
}

// writeBatch writes the segments in order, at most maxWrite bytes a call,
// with the stall timer armed around each call.
func (o *outbox) writeBatch(batch []segment, stalled *time.Timer) (int, error) {
	total := 0
	for _, s := range batch {
		b := s.b
		for len(b) > 0 {
			part := b[:min(len(b), maxWrite)]
			if stalled != nil {
				stalled.Reset(o.stall)
			}
			n, err := o.w.Write(part)
			if stalled != nil {
				stalled.Stop()
			}
			total += n
			if err == nil && n < len(part) {
				err = io.ErrShortWrite
			}
			if err != nil {
				return total, err
			}
			b = b[n:]
		}
	}
	return total, nil
}

// closeGrace bounds how long closing waits for a peer to take what is
// queued when no write timeout does.
const closeGrace = 5 * time.Second

// close stops taking lines and waits until what is queued was written,
// or the outbox failed (a stalled peer fails it through the stall timer,
// or after closeGrace without one). Later puts return err.
func (o *outbox) close(err error) {
	o.mu.Lock()
	o.closing = true
	o.ready.Signal()
	o.room.Broadcast()
	o.mu.Unlock()
	if o.stall == 0 {
		t := time.AfterFunc(closeGrace, func() {
			if o.fail(errStalled) {
				o.onBroken(errStalled)
			}
		})
		defer t.Stop()
	}
	select {
	case <-o.done:
	case <-o.failed:
	}
	o.fail(err)
}

// fail breaks the outbox at once: queued lines are dropped and every
// waiting and later put returns err. The writer may still be inside a
// Write; closing the connection is what ends that. It reports whether
// this was the first failure.
func (o *outbox) fail(err error) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failLocked(err)
}

func (o *outbox) failLocked(err error) bool {
	first := o.err == nil
	if first {
		o.err = err
		o.segs = nil
		close(o.failed)
	}
	o.room.Broadcast()
	o.ready.Signal()
	return first
}
