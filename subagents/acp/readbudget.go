// This file bounds the bytes of file reads one connection's agent has
// the parent hold at once: what is being read and what was read and waits
// for room in the output queue.

package acpprovider

import (
	"context"
	"sync"
)

// readBudget is a connection's bytes of fs/read_text_file answers. A read
// reserves the most one read may hold (Options.MaxReadBytes) before it
// starts, keeps what it read once done, and gives it back once its answer
// is in the output queue. The budget is the connection's output queue
// bound (the answers wait to be written, as queued output does), and at
// least one read's worth, so a read over it still runs, alone.
//
// The slots of MaxRequests bound every answer held, each up to a read;
// this bounds reads by bytes, not by count: an agent that sends many
// reads and takes none of the answers has the parent hold one read's
// worth, not one for each slot.
type readBudget struct {
	size int

	mu     sync.Mutex
	used   int           // guarded by mu
	freed  chan struct{} // closed and replaced when bytes are given back; guarded by mu
	logged bool          // a read waited for the budget; guarded by mu
}

// take reserves n bytes, waiting while the budget is spent; the first
// wait of a connection is logged (first reports it).
func (b *readBudget) take(ctx context.Context, n int, first func()) error {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.size {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed, logged := b.freed, b.logged
		b.logged = true
		b.mu.Unlock()
		if !logged {
			first()
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// settle turns a reservation of n bytes into the held bytes of a read that
// holds m: what it did not use is given back, what it used beyond it (an
// editor's file system answers more than the local read limit) is added
// without a wait, since it is already held.
func (b *readBudget) settle(n, m int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += m - n
	if m < n {
		b.wake()
	}
}

// give returns n bytes.
func (b *readBudget) give(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.wake()
}

// wake tells the waiting reads that bytes were given back; b.mu is held.
func (b *readBudget) wake() {
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}
