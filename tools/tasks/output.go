// This file holds a task's output: the tail it keeps, how much fell off
// the front, and the handle a running job writes through.

package tasks

import (
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/utf8cut"
)

// tail keeps the last limit bytes of a stream and counts all of it.
type tail struct {
	buf     []byte
	written int64 // bytes of the whole stream
	limit   int
}

// write appends p, dropping from the front what exceeds the limit. The
// buffer is cut back only when it reaches twice the limit, so appending
// stays amortised O(len(p)).
func (b *tail) write(p string) {
	b.written += int64(len(p))
	if len(p) >= b.limit {
		b.buf = append(b.buf[:0], p[len(p)-b.limit:]...)
		return
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= 2*b.limit {
		b.buf = b.buf[:copy(b.buf, b.buf[len(b.buf)-b.limit:])]
	}
}

// kept returns what is kept, at most limit bytes, starting on a character.
func (b *tail) kept() []byte {
	k := b.buf
	if len(k) > b.limit {
		k = k[len(k)-b.limit:]
	}
	return utf8cut.TrimPartial(k)
}

// dropped is how many bytes of the stream are no longer kept.
func (b *tail) dropped() int64 { return b.written - int64(len(b.kept())) }

// since returns the stream from offset off on, as far as it is kept, and
// how many bytes after off are gone.
func (b *tail) since(off int64) (text string, lost int64) {
	k := b.kept()
	start := b.written - int64(len(k))
	if off < start {
		lost = start - off
		off = start
	}
	if off >= b.written {
		return "", lost
	}
	return string(utf8cut.TrimPartial(k[off-start:])), lost
}

// set replaces the stream with text that followed dropped lost bytes (a
// task loaded from the journal).
func (b *tail) set(text string, dropped int64) {
	b.buf = append(b.buf[:0], text...)
	b.written = dropped + int64(len(text))
	if len(b.buf) > b.limit {
		b.buf = b.buf[:copy(b.buf, b.buf[len(b.buf)-b.limit:])]
	}
}

// writeAt appends text that begins at offset at of the stream; a gap
// before it counts as dropped, and what the tail already has is not
// written twice.
func (b *tail) writeAt(at int64, text string) {
	switch {
	case at > b.written:
		b.buf = b.buf[:0]
		b.written = at
	case at < b.written:
		skip := b.written - at
		if skip >= int64(len(text)) {
			return
		}
		text = text[skip:]
	}
	b.write(text)
}

// Output is where a running job writes what its task shows. Its methods
// are safe for concurrent use.
type Output struct {
	t *task
}

// Write adds text to the task's output.
func (o *Output) Write(text string) {
	if text == "" {
		return
	}
	t := o.t
	t.mu.Lock()
	t.out.write(text)
	t.mu.Unlock()
	t.s.outputWritten(t)
}

// AddUsage adds one model call's usage to the task's.
func (o *Output) AddUsage(u llm.Usage) {
	o.t.mu.Lock()
	o.t.usage.Add(u)
	o.t.mu.Unlock()
}

// SetChild records the id the editor knows the task's child session by.
func (o *Output) SetChild(id string) {
	o.t.mu.Lock()
	o.t.child = id
	o.t.mu.Unlock()
}
