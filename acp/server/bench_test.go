package server_test

import (
	"testing"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm/openai"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// BenchmarkPromptTurn measures the server's overhead per prompt turn: a
// client and the server over net.Pipe, the instant scripted model, a real
// journal in a temp dir (the fsync at turn end included).
//
// Each session takes 20 turns, so the figure does not grow with the
// history (a model's own cost is proportional to it).
func BenchmarkPromptTurn(b *testing.B) {
	h := newHarness(b, hopts{})
	var sid acp.SessionID
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%20 == 0 {
			sid = h.newSession()
		}
		n++
		h.mustPrompt(sid, "hello", "end_turn")
	}
}

// BenchmarkFirstChunkLatency measures the time from a model server's first
// streamed token to the client holding the first agent_message_chunk: the
// OpenAI client's SSE parsing, the agent loop, the translation, the journal
// append and the write to the client.
func BenchmarkFirstChunkLatency(b *testing.B) {
	fake := openaitest.New()
	defer fake.Close()
	client, err := openai.New(openai.Options{BaseURL: fake.URL(), DefaultModel: "m", Compat: &openai.Compat{SendStreamOptions: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	h := newHarness(b, hopts{model: client})
	sid := h.newSession()
	var total time.Duration
	arrived := make(chan chan struct{})
	fake.Handle(func(*openaitest.Request) openaitest.Reply {
		hold := make(chan struct{})
		arrived <- hold
		return openaitest.Reply{Hold: hold, Text: []string{"first", " rest"}}
	})
	for b.Loop() {
		h.ed.reset()
		done := h.promptAsync(sid, "hello")
		hold := <-arrived
		t0 := time.Now()
		close(hold)
		h.ed.waitUntil(h.ctx, b, "the first chunk", func() bool {
			for _, u := range h.ed.of(sid) {
				if _, ok := u.(*acp.AgentMessageChunk); ok {
					return true
				}
			}
			return false
		})
		total += time.Since(t0)
		if r := h.await(done); r.err != nil {
			b.Fatal(r.err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/first-chunk")
}
