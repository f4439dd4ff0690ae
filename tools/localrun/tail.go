// This file implements the bounded tail buffer that keeps the last bytes of
// a command's output.

package localrun

import "github.com/dshd/dshd/internal/utf8cut"

// tailBuffer keeps the last limit bytes written to it. It grows only as far
// as the output does, so a short command never allocates the whole limit,
// and a command that prints gigabytes costs limit bytes.
type tailBuffer struct {
	limit int
	buf   []byte
	pos   int // next write position once buf is full (ring mode)
	total int64
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

// Write keeps the end of p.
func (t *tailBuffer) Write(p []byte) {
	t.total += int64(len(p))
	if t.limit <= 0 {
		return
	}
	if len(p) >= t.limit {
		if cap(t.buf) < t.limit {
			t.buf = make([]byte, t.limit)
		}
		t.buf = t.buf[:t.limit]
		copy(t.buf, p[len(p)-t.limit:])
		t.pos = 0
		return
	}
	if len(t.buf) < t.limit {
		room := t.limit - len(t.buf)
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			return
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		t.pos = 0
	}
	// Ring mode: overwrite the oldest bytes.
	n := copy(t.buf[t.pos:], p)
	if n < len(p) {
		copy(t.buf, p[n:])
	}
	t.pos = (t.pos + len(p)) % t.limit
}

// Truncated reports whether bytes were dropped from the front.
func (t *tailBuffer) Truncated() bool { return t.total > int64(len(t.buf)) }

// String returns the kept bytes in order. When the front was dropped, the
// text starts at the first character boundary, as ACP terminals cut it.
func (t *tailBuffer) String() string {
	var out []byte
	if len(t.buf) < t.limit || t.pos == 0 {
		out = t.buf
	} else {
		out = make([]byte, 0, len(t.buf))
		out = append(out, t.buf[t.pos:]...)
		out = append(out, t.buf[:t.pos]...)
	}
	if t.Truncated() {
		out = utf8cut.TrimPartial(out)
	}
	return string(out)
}
