// This file implements the conversation history: append-only, with an O(1)
// prefix that a forked child shares without copying, and a token estimate
// that travels with every prefix.

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
// Each segment keeps the running token estimate of its messages beside
// them (one number per message, computed once when the message is
// appended), so [History.Estimate] of any prefix costs O(number of
// segments) too: a fork that inherits a long conversation never walks it.
//
// Appending to the original after taking a prefix is safe: appends only
// write beyond the length every prefix captured.
//
// A History is not safe for concurrent use; the Agent that owns it guards
// it.
type History struct {
	frozen []segment
	own    segment
	n      int   // total length, cached
	est    int64 // total estimate, cached
}

// segment is a run of messages and, for each, the estimated tokens of the
// run up to and including it.
type segment struct {
	msgs []llm.Message
	cum  []int64
}

// estimate is the estimated tokens of the whole segment.
func (s segment) estimate() int64 {
	if len(s.cum) == 0 {
		return 0
	}
	return s.cum[len(s.cum)-1]
}

// head returns the segment's first k messages, sharing its storage.
func (s segment) head(k int) segment {
	return segment{msgs: s.msgs[:k:k], cum: s.cum[:k:k]}
}

// NewHistory returns a history holding msgs (which it takes ownership of).
func NewHistory(msgs ...llm.Message) History {
	h := History{own: segment{msgs: msgs[:0:len(msgs)]}}
	h.own.cum = make([]int64, 0, len(msgs))
	h.Append(msgs...)
	return h
}

// Len returns the number of messages.
func (h History) Len() int { return h.n }

// Estimate returns the estimated tokens of the messages; it does not visit
// them.
func (h History) Estimate() int64 { return h.est }

// Append adds messages at the end.
func (h *History) Append(msgs ...llm.Message) {
	run := h.own.estimate()
	for _, m := range msgs {
		e := estimateTokens(m)
		run += e
		h.est += e
		h.own.msgs = append(h.own.msgs, m)
		h.own.cum = append(h.own.cum, run)
	}
	h.n += len(msgs)
}

// All iterates over the messages in order.
func (h History) All() iter.Seq2[int, llm.Message] {
	return func(yield func(int, llm.Message) bool) {
		i := 0
		for _, seg := range h.frozen {
			for _, m := range seg.msgs {
				if !yield(i, m) {
					return
				}
				i++
			}
		}
		for _, m := range h.own.msgs {
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
	own := h.own.msgs
	if len(h.frozen) == 0 {
		return own[:len(own):len(own)]
	}
	out := make([]llm.Message, 0, h.n)
	for _, seg := range h.frozen {
		out = append(out, seg.msgs...)
	}
	return append(out, own...)
}

// At returns message i.
func (h History) At(i int) llm.Message {
	for _, seg := range h.frozen {
		if i < len(seg.msgs) {
			return seg.msgs[i]
		}
		i -= len(seg.msgs)
	}
	return h.own.msgs[i]
}

// Last returns the last message, and false when the history is empty.
func (h History) Last() (llm.Message, bool) {
	if h.n == 0 {
		return llm.Message{}, false
	}
	return h.At(h.n - 1), true
}

// Prefix returns a History sharing the first n messages of h, and their
// estimate. Its cost does not depend on n or on h's length, only on the
// number of frozen segments (one per level of forking).
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
	take := func(seg segment) {
		if rest < len(seg.msgs) {
			seg = seg.head(rest)
		}
		p.frozen = append(p.frozen, seg)
		p.est += seg.estimate()
		rest -= len(seg.msgs)
	}
	for _, seg := range h.frozen {
		if rest == 0 {
			return p
		}
		take(seg)
	}
	if rest > 0 {
		take(h.own)
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
