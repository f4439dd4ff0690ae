// This file implements the conversation history: append-only, with an O(1)
// prefix that a forked child shares without copying.

package agent

import (
	"iter"

	"github.com/dshd/dshd/agent/llm"
)

// History is an append-only list of messages.
//
// A History is a value made of frozen segments, which are shared and never
// written again, and one segment of its own. Prefix returns a History that
// shares the first n messages in O(number of segments) — the parent's log
// length does not matter — and whatever the new History appends goes to a
// segment of its own, so nothing it appends ever reaches the original.
//
// Appending to the original after taking a prefix is safe: appends only
// write beyond the length every prefix captured.
//
// A History is not safe for concurrent use; the Agent that owns it guards
// it.
type History struct {
	frozen [][]llm.Message
	own    []llm.Message
	n      int // total length, cached
}

// NewHistory returns a history holding msgs (which it takes ownership of).
func NewHistory(msgs ...llm.Message) History {
	return History{own: msgs, n: len(msgs)}
}

// Len returns the number of messages.
func (h History) Len() int { return h.n }

// Append adds messages at the end.
func (h *History) Append(msgs ...llm.Message) {
	h.own = append(h.own, msgs...)
	h.n += len(msgs)
}

// All iterates over the messages in order.
func (h History) All() iter.Seq2[int, llm.Message] {
	return func(yield func(int, llm.Message) bool) {
		i := 0
		for _, seg := range h.frozen {
			for _, m := range seg {
				if !yield(i, m) {
					return
				}
				i++
			}
		}
		for _, m := range h.own {
			if !yield(i, m) {
				return
			}
			i++
		}
	}
}

// Messages returns the messages as one slice that the caller must not
// modify. A history that was never forked returns its own storage, capped
// so an append by the caller copies; otherwise it costs O(Len).
func (h History) Messages() []llm.Message {
	if len(h.frozen) == 0 {
		return h.own[:len(h.own):len(h.own)]
	}
	out := make([]llm.Message, 0, h.n)
	for _, seg := range h.frozen {
		out = append(out, seg...)
	}
	return append(out, h.own...)
}

// At returns message i.
func (h History) At(i int) llm.Message {
	for _, seg := range h.frozen {
		if i < len(seg) {
			return seg[i]
		}
		i -= len(seg)
	}
	return h.own[i]
}

// Last returns the last message, and false when the history is empty.
func (h History) Last() (llm.Message, bool) {
	if h.n == 0 {
		return llm.Message{}, false
	}
	return h.At(h.n - 1), true
}

// Prefix returns a History sharing the first n messages of h. Its cost does
// not depend on n or on h's length, only on the number of frozen segments
// (one per level of forking).
func (h History) Prefix(n int) History {
	if n > h.n {
		n = h.n
	}
	if n < 0 {
		n = 0
	}
	var p History
	p.n = n
	rest := n
	for _, seg := range h.frozen {
		if rest == 0 {
			return p
		}
		if rest < len(seg) {
			p.frozen = append(p.frozen, seg[:rest:rest])
			return p
		}
		p.frozen = append(p.frozen, seg)
		rest -= len(seg)
	}
	if rest > 0 {
		p.frozen = append(p.frozen, h.own[:rest:rest])
	}
	return p
}

// truncate drops messages from the end so that n remain. It is used to
// forget a refused turn; it never writes into frozen segments.
func (h *History) truncate(n int) {
	if n >= h.n {
		return
	}
	*h = h.Prefix(n)
}
