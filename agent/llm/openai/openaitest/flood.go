// Flood: an answer that does not end by itself (a looping local model, a
// hostile server, a proxy gone wrong), for the tests of a client's bound
// on one answer.

package openaitest

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
)

// Flood is an answer that goes on and on: after the reply's own content
// (its reasoning, text and tool calls, with no finish), one part of an
// answer repeats until the client goes away, the server closes, or the
// body reaches FinishAfter bytes.
type Flood struct {
	// Of is the part that repeats.
	Of FloodPart
	// Fragment is what each repetition carries; it is written as it is,
	// so it must need no JSON escaping. "" is 4 KiB of "x" (of spaces for
	// [FloodEventLines]).
	Fragment string
	// FinishAfter, when above zero, ends the answer normally (the part
	// closed, its finish reason, [DONE]) once the body holds that many
	// bytes: a complete answer that is merely too large. Zero floods
	// without end.
	FinishAfter int64
	// Sent, when set, counts the bytes of the body as they are written:
	// how far the server got before its client stopped reading.
	Sent *atomic.Int64
}

// FloodPart is the part of an answer a [Flood] repeats.
type FloodPart uint8

// The parts a flood repeats. A JSON reply ([Reply.JSON]) floods its
// message's content whatever the part.
const (
	// FloodText streams a text delta per event.
	FloodText FloodPart = iota
	// FloodReasoning streams a reasoning delta per event, in the reply's
	// ReasoningField.
	FloodReasoning
	// FloodArguments opens one tool call (write_file, id call_flood) and
	// streams an arguments fragment per event; it finishes with
	// "tool_calls".
	FloodArguments
	// FloodCalls opens a new tool call per event, with no arguments: at
	// index 0, without an id, named read_file and list_dir by turns, as
	// Ollama sends parallel calls. It finishes with "tool_calls".
	FloodCalls
	// FloodEventLines streams one event whose data never ends: a "data:"
	// line after another and never the blank line that ends an event.
	// The data is a chunk with JSON white space between its last two
	// bytes, so a Fragment of spaces keeps it valid.
	FloodEventLines
	// FloodLine streams one "data:" line that never ends: a text delta
	// whose string grows by a Fragment each write.
	FloodLine
)

func (f *Flood) fragment() string {
	if f.Fragment != "" {
		return f.Fragment
	}
	if f.Of == FloodEventLines {
		return strings.Repeat(" ", 4096)
	}
	return strings.Repeat("x", 4096)
}

// parts returns what the flood writes once first, again and again, and
// once at the end before the finish, and its finish reason.
func (st *streamer) parts(f *Flood) (head, each, tail []byte, finish string) {
	frag := f.fragment()
	event := func(d map[string]any) []byte { return st.frame(st.envelope(st.delta(d, nil), nil), 0) }
	finish = "stop"
	switch f.Of {
	case FloodReasoning:
		each = event(map[string]any{st.reasoningField(): verbatim(frag), "content": nil})
	case FloodArguments:
		call := ToolCall{ID: "call_flood", Name: "write_file"}
		head = event(map[string]any{"tool_calls": []any{call.head(0, "", true)}})
		each = event(map[string]any{"tool_calls": []any{call.head(0, verbatim(frag), false)}})
		finish = "tool_calls"
	case FloodCalls:
		for _, name := range []string{"read_file", "list_dir"} {
			call := ToolCall{Name: name, Index: new(int)}
			each = append(each, event(map[string]any{"tool_calls": []any{call.head(0, "", true)}})...)
		}
		finish = "tool_calls"
	case FloodEventLines:
		chunk := st.envelope(st.delta(map[string]any{"content": "x"}, nil), nil)
		head = []byte("data: " + string(chunk[:len(chunk)-1]) + st.nl)
		each = []byte("data: " + frag + st.nl)
		tail = []byte("data: }" + st.nl + st.nl)
	case FloodLine:
		chunk := string(st.envelope(st.delta(map[string]any{"content": "\x00"}, nil), nil))
		open, closing, _ := strings.Cut(chunk, `\u0000`)
		head = []byte("data: " + open)
		each = []byte(frag)
		tail = []byte(closing + st.nl + st.nl)
	default:
		each = event(map[string]any{"content": verbatim(frag)})
	}
	return head, each, tail, finish
}

// flood writes the flood of a streamed reply; the reply's own content
// was written before it.
func (st *streamer) flood() {
	f := st.rep.Flood
	head, each, tail, finish := st.parts(f)
	if !st.write(head) {
		return
	}
	for f.FinishAfter <= 0 || st.written < f.FinishAfter {
		if !st.write(each) {
			return
		}
	}
	end := st.frame(st.envelope(st.delta(map[string]any{}, finish), nil), 0)
	if st.write(tail) && st.write(end) {
		st.write(st.frame([]byte("[DONE]"), 0))
	}
}

// floodJSON writes a non-streamed reply whose message content floods.
func (st *streamer) floodJSON() {
	f := st.rep.Flood
	frag := []byte(f.fragment())
	head, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + strconv.Itoa(st.seq), "object": "chat.completion", "created": created, "model": st.req.Model,
	})
	// The object stays open: its choices follow, and the content of the
	// one message grows until the flood ends.
	open := string(head[:len(head)-1]) + `,"choices":[{"index":0,"message":{"role":"assistant","content":"`
	if !st.write([]byte(open)) {
		return
	}
	for f.FinishAfter <= 0 || st.written < f.FinishAfter {
		if !st.write(frag) {
			return
		}
	}
	st.write([]byte(`"},"finish_reason":"stop"}]}`))
}
