package rpc

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"
)

func chunkUpdate() *acp.SessionNotification {
	return &acp.SessionNotification{SessionID: "s_4be1", Update: &acp.AgentMessageChunk{
		MessageID: "m9", Content: acp.TextBlock("Checkout issues **3** queries per item.")}}
}

func toolCallUpdate() *acp.SessionNotification {
	line := uint32(12)
	return &acp.SessionNotification{SessionID: "s_4be1", Update: &acp.ToolCall{
		ToolCallID: "tc_8", Title: "Read cart.go", Kind: acp.ToolKindRead, Status: acp.ToolCallStatusPending,
		Locations: []acp.ToolCallLocation{{Path: "/home/dev/shop/cart.go", Line: &line}},
		RawInput:  json.RawMessage(`{"file":"cart.go"}`),
	}}
}

// drainedPipe returns the write end of an OS pipe whose read end a
// goroutine drains, like an editor reading the agent's stdout.
func drainedPipe(b *testing.B) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(io.Discard, r) })
	b.Cleanup(func() {
		w.Close()
		wg.Wait()
		r.Close()
	})
	return w
}

// BenchmarkWriteNotification measures the session/update fast path: one
// marshal, one locked write, one flush, into a drained OS pipe.
func BenchmarkWriteNotification(b *testing.B) {
	eachUpdate(b, func(b *testing.B, n *acp.SessionNotification) {
		s := NewStream(nil, drainedPipe(b), nil, nil)
		defer s.Close()
		b.ReportAllocs()
		for b.Loop() {
			if err := s.WriteNotification(acp.MethodSessionUpdate, n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifications/s")
	})
	b.Run("parallel_writers", func(b *testing.B) {
		s := NewStream(nil, drainedPipe(b), nil, nil)
		defer s.Close()
		n := chunkUpdate()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := s.WriteNotification(acp.MethodSessionUpdate, n); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifications/s")
	})
}

// BenchmarkMarshalSessionUpdate measures encoding alone.
func BenchmarkMarshalSessionUpdate(b *testing.B) {
	eachUpdate(b, func(b *testing.B, n *acp.SessionNotification) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(n); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// eachUpdate runs f as a sub-benchmark for each kind of update measured:
// a streamed text chunk and a tool call.
func eachUpdate(b *testing.B, f func(*testing.B, *acp.SessionNotification)) {
	b.Run("chunk", func(b *testing.B) { f(b, chunkUpdate()) })
	b.Run("tool_call", func(b *testing.B) { f(b, toolCallUpdate()) })
}

// BenchmarkClientReceivesUpdates measures the receiving side end to end:
// an AgentSideConn writes updates, a ClientSideConn reads, decodes and
// dispatches them in order (the acp subagent provider's hot path).
func BenchmarkClientReceivesUpdates(b *testing.B) {
	received := make(chan struct{}, 1)
	var count int
	var want int
	cl := &fakeClient{update: func(context.Context, *acp.SessionNotification) error {
		count++
		if count == want {
			received <- struct{}{}
		}
		return nil
	}}
	agentEnd, clientEnd := net.Pipe()
	a := &fakeAgent{}
	a.conn = NewAgentSideConn(agentEnd, a, nil)
	c := NewClientSideConn(clientEnd, cl, nil)
	defer func() {
		c.Close()
		<-a.conn.Done()
	}()
	if _, err := c.Initialize(b.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		b.Fatal(err)
	}
	n := chunkUpdate()
	want = b.N
	b.ResetTimer()
	for range b.N {
		if err := a.conn.SessionUpdate(b.Context(), n); err != nil {
			b.Fatal(err)
		}
	}
	<-received
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifications/s")
}
