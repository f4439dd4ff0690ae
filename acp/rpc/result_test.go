package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshd/dshd/acp"
)

// heldResults returns how many response results the connection holds for
// calls that have not taken them.
func heldResults(c *conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.results)
}

// The result of a response to one of our calls reaches the call past
// jsonrpc2 (Stream.takeResult): the call gets it exactly, a response for no
// pending call is dropped as before, and a result that arrives after its
// call gave up is not kept.
func TestCallResultsReachTheirCallAndNothingElseIsKept(t *testing.T) {
	type answer struct {
		resp *acp.ReadTextFileResponse
		err  error
	}
	answers := make(chan answer, 1)
	cancelCall := make(chan context.CancelFunc, 1)
	a := &fakeAgent{}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		if r.SessionID == "late" {
			cancelCall <- cancel
		}
		resp, err := a.conn.ReadTextFile(callCtx, &acp.ReadTextFileRequest{SessionID: r.SessionID, Path: "/f"})
		answers <- answer{resp, err}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	p := newRawAgent(t, a)
	p.initialize()

	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(p.recv()), &req); err != nil || req.Method != acp.MethodFsReadTextFile {
		t.Fatalf("want a %s call, got %s (%v)", acp.MethodFsReadTextFile, req.Method, err)
	}
	// An answer to a call nobody made is dropped, and not kept.
	p.send(`{"jsonrpc":"2.0","id":4242,"result":{"content":"not this"}}`)
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"the <file> & \"text\""}}`)
	got := <-answers
	if got.err != nil || got.resp.Content != `the <file> & "text"` {
		t.Fatalf("ReadTextFile = %+v, %v", got.resp, got.err)
	}
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)
	if n := heldResults(a.conn.c); n != 0 {
		t.Fatalf("%d results held after the call returned", n)
	}

	// A call that gave up: its late answer is not kept for anyone.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"late","prompt":[]}}`)
	if err := json.Unmarshal([]byte(p.recv()), &req); err != nil || req.Method != acp.MethodFsReadTextFile {
		t.Fatalf("want a %s call, got %s (%v)", acp.MethodFsReadTextFile, req.Method, err)
	}
	(<-cancelCall)()
	if got := <-answers; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("cancelled ReadTextFile = %v, want context.Canceled", got.err)
	}
	p.expect(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + string(req.ID) + `}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`)
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"too late"}}`)
	// A request after the late answer is read after it, so once it is
	// answered the late answer went through the read loop.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"logout","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	if n := heldResults(a.conn.c); n != 0 {
		t.Fatalf("%d results held after a late answer", n)
	}
}
