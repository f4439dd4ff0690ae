package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"
)

func TestAgentGatesRequestsUntilInitialize(t *testing.T) {
	a := &fakeAgent{}
	p := newRawAgent(t, a)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/x","mcpServers":[]}}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"connection not initialized"}}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"early"}}`)
	p.initialize()
	p.initialize() // a repeated initialize is answered again
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"late"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/x","mcpServers":[]}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
	if got := a.cancelledSessions(); len(got) != 1 || got[0] != "late" {
		t.Errorf("cancels delivered: %v, want only the one after initialize", got)
	}
}

func TestAFailedInitializeKeepsTheGateClosed(t *testing.T) {
	a := &fakeAgent{initialize: func(context.Context, *acp.InitializeRequest) (*acp.InitializeResponse, error) {
		return nil, acp.ErrInternal
	}}
	p := newRawAgent(t, a)
	p.send(initLine)
	p.expect(`{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Internal error"}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"connection not initialized"}}}`)
}

func TestMethodTableChecks(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown extension request", `{"jsonrpc":"2.0","id":"q1","method":"_acme/ping","params":{}}`,
			`{"jsonrpc":"2.0","id":"q1","error":{"code":-32601,"message":"Method not found","data":{"method":"_acme/ping"}}}`},
		{"unknown request", `{"jsonrpc":"2.0","id":3,"method":"session/unknown","params":{}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"method":"session/unknown"}}}`},
		{"notification method called as a request", `{"jsonrpc":"2.0","id":4,"method":"session/cancel","params":{"sessionId":"s"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found","data":{"method":"session/cancel"}}}`},
		{"missing params", `{"jsonrpc":"2.0","id":5,"method":"session/new"}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"required"}}}`},
		{"null params", `{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":null}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"required"}}}`},
		{"array params", `{"jsonrpc":"2.0","id":7,"method":"session/close","params":["s"]}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"must be an object, not an array"}}}`},
		{"missing field", `{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"/x"}}`,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params","data":{"field":"mcpServers","reason":"required"}}}`},
		{"ill-typed field", `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":5,"prompt":[]}}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid params","data":{"field":"sessionId","reason":"must be a string, not a number"}}}`},
		{"logout without params", `{"jsonrpc":"2.0","id":10,"method":"logout"}`, `{"jsonrpc":"2.0","id":10,"result":{}}`},
		{"session/list with null params", `{"jsonrpc":"2.0","id":11,"method":"session/list","params":null}`, `{"jsonrpc":"2.0","id":11,"result":{"sessions":[]}}`},
		{"string id is kept", `{"jsonrpc":"2.0","id":"7","method":"logout"}`, `{"jsonrpc":"2.0","id":"7","result":{}}`},
		{"null id is kept", `{"jsonrpc":"2.0","id":null,"method":"logout"}`, `{"jsonrpc":"2.0","id":null,"result":{}}`},
		{"negative id is kept", `{"jsonrpc":"2.0","id":-3,"method":"logout"}`, `{"jsonrpc":"2.0","id":-3,"result":{}}`},
	}
	a := &fakeAgent{}
	p := newRawAgent(t, a)
	p.initialize()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			p.send(tt.in)
			p.expect(tt.want)
		})
	}
}

func TestUnknownNotificationsAreIgnored(t *testing.T) {
	p := newRawAgent(t, &fakeAgent{})
	p.initialize()
	p.send(`{"jsonrpc":"2.0","method":"_acme/heartbeat","params":{"n":3}}`)
	p.send(`{"jsonrpc":"2.0","method":"$/progress","params":{}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/cancel"}`) // no params: dropped, nothing to answer
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":999}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"logout"}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
}

func TestNotificationsAreHandledInArrivalOrder(t *testing.T) {
	const n = 500
	a := &fakeAgent{}
	p := newRawAgent(t, a)
	p.initialize()
	var want []acp.SessionID
	for i := range n {
		id := acp.SessionID(fmt.Sprintf("s%d", i))
		want = append(want, id)
		p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + string(id) + `"}}`)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"logout"}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	got := a.cancelledSessions()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cancels out of order or missing: got %d, first %v", len(got), got[:min(5, len(got))])
	}
}

// The prompt handler calls the client mid-request. The test sends a
// session/cancel before answering that call, so when the answer reaches the
// handler the cancel is already queued: it must not have run, because the
// handler has not detached yet; after Detach it runs while the handler still
// runs.
func TestHandlersAreSynchronousUntilDetach(t *testing.T) {
	cancelRan := make(chan struct{})
	var before int
	a := &fakeAgent{cancel: func(context.Context, *acp.CancelNotification) error {
		close(cancelRan)
		return nil
	}}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		if _, err := a.conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: r.SessionID, Path: "/f"}); err != nil {
			return nil, err
		}
		before = len(a.cancelledSessions())
		Detach(ctx)
		<-cancelRan
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	p := newRawAgent(t, a)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/f"}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}`)
	if before != 0 {
		t.Errorf("session/cancel ran before the prompt handler detached")
	}
}

func TestCancelRequestForAQueuedRequest(t *testing.T) {
	listRan := false
	a := &fakeAgent{list: func(context.Context, *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
		listRan = true
		return nil, nil
	}}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		// Blocks the dispatcher (no Detach) until the client answers.
		if _, err := a.conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: "s", Path: "/f"}); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	p := newRawAgent(t, a)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)
	p.recv() // fs/read_text_file
	p.send(`{"jsonrpc":"2.0","id":21,"method":"session/list","params":{}}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":21}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)
	p.expect(`{"jsonrpc":"2.0","id":21,"error":{"code":-32800,"message":"Request cancelled"}}`)
	if listRan {
		t.Error("a request cancelled while queued still ran")
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":21}}`) // already answered
	p.send(`{"jsonrpc":"2.0","id":22,"method":"logout"}`)
	p.expect(`{"jsonrpc":"2.0","id":22,"result":{}}`)
}

func TestCancelRequestForARunningRequest(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		result bool // the handler returns a result after the cancel
		want   string
	}{
		{"error becomes -32800", `7`, false, `{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}}`},
		{"result still goes out", `"p7"`, true, `{"jsonrpc":"2.0","id":"p7","result":{"stopReason":"cancelled"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{})
			a := &fakeAgent{prompt: func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
				Detach(ctx)
				close(started)
				<-ctx.Done()
				if tt.result {
					return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
				}
				return nil, errors.New("aborted")
			}}
			p := newRawAgent(t, a)
			p.initialize()
			p.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)
			<-started
			p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + tt.id + `}}`)
			p.expect(tt.want)
		})
	}
}

func TestAHandlerPanicIsAnInternalError(t *testing.T) {
	a := &fakeAgent{newSession: func(context.Context, *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
		panic("boom")
	}}
	p := newRawAgent(t, a)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/x","mcpServers":[]}}`)
	p.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"reason":"handler panicked"}}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"logout"}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
}

func TestBadLinesDoNotKillTheConnection(t *testing.T) {
	p := newRawAgent(t, &fakeAgent{})
	p.send(`{not json`)
	p.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	p.send(`[]`)
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	p.initialize()
}

// extAgent serves extension methods too.
type extAgent struct {
	fakeAgent
	notes chan string
}

func (a *extAgent) HandleExtRequest(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method == "_dsh.dev/stats" {
		return map[string]int{"turns": 4}, nil
	}
	return nil, acp.ErrMethodNotFound.WithData(map[string]string{"method": method})
}

func (a *extAgent) HandleExtNotification(_ context.Context, method string, params json.RawMessage) error {
	a.notes <- method + " " + string(params)
	return nil
}

func TestExtensionMethods(t *testing.T) {
	a := &extAgent{notes: make(chan string, 1)}
	agentEnd, testEnd := net.Pipe()
	conn := NewAgentSideConn(agentEnd, a, nil)
	t.Cleanup(func() { <-conn.Done() }) // runs after newLinePeer's cleanup closed the pipe
	p := newLinePeer(t, testEnd)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":30,"method":"_dsh.dev/stats","params":{"sessionId":"s"}}`)
	p.expect(`{"jsonrpc":"2.0","id":30,"result":{"turns":4}}`)
	p.send(`{"jsonrpc":"2.0","id":31,"method":"_other"}`)
	p.expect(`{"jsonrpc":"2.0","id":31,"error":{"code":-32601,"message":"Method not found","data":{"method":"_other"}}}`)
	p.send(`{"jsonrpc":"2.0","method":"_dsh.dev/ping","params":{"n":1}}`)
	if got := <-a.notes; got != `_dsh.dev/ping {"n":1}` {
		t.Errorf("extension notification: %q", got)
	}
	type callResult struct {
		raw json.RawMessage
		err error
	}
	res := make(chan callResult, 1)
	go func() {
		raw, err := conn.Call(t.Context(), "_client/op", map[string]int{"a": 1})
		res <- callResult{raw, err}
	}()
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"_client/op","params":{"a":1}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
	if r := <-res; r.err != nil || string(r.raw) != `{"ok":true}` {
		t.Errorf("Call = %s, %v", r.raw, r.err)
	}
}

func TestClientCallsTheAgentAndSeesEveryUpdateFirst(t *testing.T) {
	const n = 2000
	var mu sync.Mutex
	var got []string
	cl := &fakeClient{
		update: func(_ context.Context, u *acp.SessionNotification) error {
			mu.Lock()
			got = append(got, u.Update.(*acp.AgentMessageChunk).Content.(*acp.TextContent).Text)
			mu.Unlock()
			return nil
		},
		permission: func(_ context.Context, r *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
			return &acp.RequestPermissionResponse{Outcome: acp.Selected(r.Options[0].OptionID)}, nil
		},
	}
	a := &fakeAgent{}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		perm, err := a.conn.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: r.SessionID,
			ToolCall: acp.ToolCallUpdate{ToolCallID: "tc"},
			Options:  []acp.PermissionOption{{OptionID: "yes", Name: "Yes", Kind: acp.PermissionAllowOnce}}})
		if err != nil {
			return nil, err
		}
		if o, ok := perm.Outcome.(*acp.SelectedPermissionOutcome); !ok || o.OptionID != "yes" {
			return nil, fmt.Errorf("outcome %#v", perm.Outcome)
		}
		for i := range n {
			u := &acp.SessionNotification{SessionID: r.SessionID, Update: &acp.AgentMessageChunk{Content: acp.TextBlock(fmt.Sprint(i))}}
			if err := a.conn.SessionUpdate(ctx, u); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	c := newInitializedPair(t, a, cl)
	ctx := t.Context()
	resp, err := c.Prompt(ctx, &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("Prompt returned after %d of %d updates", len(got), n)
	}
	for i, s := range got {
		if s != fmt.Sprint(i) {
			t.Fatalf("update %d is %q: out of order", i, s)
		}
	}
}

func TestOutgoingCallErrors(t *testing.T) {
	c := newPair(t, &fakeAgent{}, &fakeClient{})
	ctx := t.Context()
	_, err := c.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/x"})
	if !errors.Is(err, acp.ErrInvalidRequest) {
		t.Fatalf("session/new before initialize: %v, want -32600", err)
	}
	if _, err := c.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	var e *acp.Error
	_, err = c.LoadSession(ctx, &acp.LoadSessionRequest{Cwd: "/x"})
	if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(fmt.Sprintf("%s", e.Data), "sessionId") {
		t.Fatalf("load without sessionId: %v", err)
	}
	if _, err := c.Logout(ctx, nil); err != nil {
		t.Fatalf("logout with nil params: %v", err)
	}
}

func TestCancellingAnOutgoingCallSendsCancelRequest(t *testing.T) {
	handlerCancelled := make(chan error, 1)
	started := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		close(started)
		<-ctx.Done()
		handlerCancelled <- ctx.Err()
		return nil, ctx.Err()
	}}
	c := newInitializedPair(t, a, &fakeClient{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Prompt(ctx, &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt = %v, want context.Canceled", err)
	}
	if err := <-handlerCancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the agent's handler saw %v", err)
	}
	if _, err := c.Logout(t.Context(), nil); err != nil {
		t.Fatalf("connection unusable after a cancelled call: %v", err)
	}
}

func TestPeerDisconnectMidCall(t *testing.T) {
	asked := make(chan struct{})
	agentErr := make(chan error, 1)
	cl := &fakeClient{read: func(ctx context.Context, r *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
		close(asked)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	a := &fakeAgent{}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		_, err := a.conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: "s", Path: "/f"})
		agentErr <- err
		return nil, err
	}
	c := newInitializedPair(t, a, cl)
	promptErr := make(chan error, 1)
	go func() {
		_, err := c.Prompt(t.Context(), &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{}})
		promptErr <- err
	}()
	<-asked
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-promptErr; !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("client's pending Prompt: %v, want ErrConnClosed", err)
	}
	if err := <-agentErr; !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("agent's pending call: %v, want ErrConnClosed", err)
	}
	<-a.conn.Done()
	if _, err := c.Logout(t.Context(), nil); !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("call on a closed connection: %v", err)
	}
	if err := a.conn.SessionUpdate(t.Context(), &acp.SessionNotification{SessionID: "s", Update: &acp.Plan{}}); !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("update on a closed connection: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestRequestIDFromContext(t *testing.T) {
	ids := make(chan string, 1)
	a := &fakeAgent{newSession: func(ctx context.Context, _ *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
		id, _ := RequestIDFromContext(ctx)
		ids <- id.String()
		return &acp.NewSessionResponse{SessionID: "s"}, nil
	}}
	p := newRawAgent(t, a)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":"r-1","method":"session/new","params":{"cwd":"/x","mcpServers":[]}}`)
	p.recv()
	if got := <-ids; got != `"r-1"` {
		t.Errorf("request id %s", got)
	}
}

func TestTheAgentCancelsItsOwnCallToTheClient(t *testing.T) {
	clientSaw := make(chan error, 1)
	asked := make(chan struct{})
	cl := &fakeClient{permission: func(ctx context.Context, _ *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
		close(asked)
		<-ctx.Done()
		clientSaw <- ctx.Err()
		return &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil
	}}
	a := &fakeAgent{}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		callCtx, cancel := context.WithCancel(ctx)
		go func() {
			<-asked
			cancel()
		}()
		_, err := a.conn.RequestPermission(callCtx, &acp.RequestPermissionRequest{SessionID: "s",
			ToolCall: acp.ToolCallUpdate{ToolCallID: "t"}, Options: []acp.PermissionOption{}})
		if !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("RequestPermission = %v", err)
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	c := newInitializedPair(t, a, cl)
	resp, err := c.Prompt(t.Context(), &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{}})
	if err != nil || resp.StopReason != acp.StopReasonCancelled {
		t.Fatalf("Prompt = %+v, %v", resp, err)
	}
	if err := <-clientSaw; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's handler saw %v", err)
	}
}

// pingAgent answers the extension request _ping after sending an update.
type pingAgent struct{ fakeAgent }

func (a *pingAgent) HandleExtRequest(ctx context.Context, method string, _ json.RawMessage) (any, error) {
	err := a.conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s", Update: &acp.AgentMessageChunk{Content: acp.TextBlock("before pong")}})
	return map[string]bool{"pong": true}, err
}

func (a *pingAgent) HandleExtNotification(context.Context, string, json.RawMessage) error { return nil }

// A client handler that blocks the dispatcher and calls the agent must not
// wait for the notifications queued behind itself.
func TestABlockingClientHandlerCanCallTheAgent(t *testing.T) {
	a := &pingAgent{}
	var c *ClientSideConn
	cl := &fakeClient{permission: func(ctx context.Context, _ *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
		if _, err := c.Call(ctx, "_ping", nil); err != nil {
			return nil, err
		}
		return &acp.RequestPermissionResponse{Outcome: acp.Selected("yes")}, nil
	}}
	a.prompt = func(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
		Detach(ctx)
		if _, err := a.conn.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: "s",
			ToolCall: acp.ToolCallUpdate{ToolCallID: "t"}, Options: []acp.PermissionOption{}}); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	agentEnd, clientEnd := net.Pipe()
	a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Logger: testLogger(t)})
	c = NewClientSideConn(clientEnd, cl, &ConnOptions{Logger: testLogger(t)})
	t.Cleanup(func() {
		c.Close()
		<-a.conn.Done()
	})
	if _, err := c.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Prompt(t.Context(), &acp.PromptRequest{SessionID: "s", Prompt: []acp.ContentBlock{}}); err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("Prompt = %+v, %v", resp, err)
	}
}
