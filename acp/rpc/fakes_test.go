package rpc

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"
)

// fakeAgent is an Agent whose methods call optional hooks.
type fakeAgent struct {
	conn *AgentSideConn // set right after NewAgentSideConn

	initialize func(context.Context, *acp.InitializeRequest) (*acp.InitializeResponse, error)
	newSession func(context.Context, *acp.NewSessionRequest) (*acp.NewSessionResponse, error)
	list       func(context.Context, *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error)
	prompt     func(context.Context, *acp.PromptRequest) (*acp.PromptResponse, error)
	cancel     func(context.Context, *acp.CancelNotification) error

	mu        sync.Mutex
	cancelled []acp.SessionID
}

func (a *fakeAgent) Initialize(ctx context.Context, r *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return hookOr(ctx, a.initialize, r, &acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1}, nil)
}

func (a *fakeAgent) Authenticate(context.Context, *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	return nil, nil
}

func (a *fakeAgent) Logout(context.Context, *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	return nil, nil
}

func (a *fakeAgent) NewSession(ctx context.Context, r *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	return hookOr(ctx, a.newSession, r, &acp.NewSessionResponse{SessionID: "s1"}, nil)
}

func (a *fakeAgent) LoadSession(context.Context, *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) ForkSession(context.Context, *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	return nil, acp.ErrMethodNotFound
}

func (a *fakeAgent) ResumeSession(context.Context, *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) CloseSession(context.Context, *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) ListSessions(ctx context.Context, r *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	return hookOr(ctx, a.list, r, &acp.ListSessionsResponse{}, nil)
}

func (a *fakeAgent) DeleteSession(context.Context, *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) SetSessionMode(context.Context, *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	return nil, nil
}

func (a *fakeAgent) SetSessionConfigOption(context.Context, *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, r *acp.PromptRequest) (*acp.PromptResponse, error) {
	return hookOr(ctx, a.prompt, r, &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil)
}

func (a *fakeAgent) Cancel(ctx context.Context, n *acp.CancelNotification) error {
	a.mu.Lock()
	a.cancelled = append(a.cancelled, n.SessionID)
	a.mu.Unlock()
	if a.cancel != nil {
		return a.cancel(ctx, n)
	}
	return nil
}

func (a *fakeAgent) cancelledSessions() []acp.SessionID {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]acp.SessionID(nil), a.cancelled...)
}

// fakeClient is a Client whose methods call optional hooks.
type fakeClient struct {
	update     func(context.Context, *acp.SessionNotification) error
	permission func(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error)
	read       func(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error)
}

func (c *fakeClient) SessionUpdate(ctx context.Context, n *acp.SessionNotification) error {
	if c.update != nil {
		return c.update(ctx, n)
	}
	return nil
}

func (c *fakeClient) RequestPermission(ctx context.Context, r *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return hookOr(ctx, c.permission, r, &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil)
}

func (c *fakeClient) ReadTextFile(ctx context.Context, r *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return hookOr(ctx, c.read, r, nil, acp.ErrResourceNotFound)
}

func (c *fakeClient) WriteTextFile(context.Context, *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	return nil, nil
}

func (c *fakeClient) CreateTerminal(context.Context, *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	return &acp.CreateTerminalResponse{TerminalID: "t1"}, nil
}

func (c *fakeClient) TerminalOutput(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	return &acp.TerminalOutputResponse{}, nil
}

func (c *fakeClient) WaitForTerminalExit(context.Context, *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	return &acp.WaitForTerminalExitResponse{}, nil
}

func (c *fakeClient) KillTerminal(context.Context, *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	return nil, nil
}

func (c *fakeClient) ReleaseTerminal(context.Context, *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	return nil, nil
}

func (c *fakeClient) CreateElicitation(context.Context, *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	return &acp.CreateElicitationResponse{Action: acp.ElicitationDecline}, nil
}

func (c *fakeClient) CompleteElicitation(context.Context, *acp.CompleteElicitationNotification) error {
	return nil
}

// hookOr answers r with hook when the test set one, else with resp and
// err.
func hookOr[Req, Resp any](ctx context.Context, hook func(context.Context, Req) (Resp, error), r Req, resp Resp, err error) (Resp, error) {
	if hook != nil {
		return hook(ctx, r)
	}
	return resp, err
}

// newRawAgent serves a over one end of a net.Pipe and returns the other end
// as a line peer playing the client.
func newRawAgent(t *testing.T, a *fakeAgent) *linePeer {
	t.Helper()
	agentEnd, testEnd := net.Pipe()
	a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Logger: testLogger(t)})
	p := newLinePeer(t, testEnd)
	t.Cleanup(func() {
		testEnd.Close()
		<-a.conn.Done()
	})
	return p
}

// newLinePeer reads lines from rw in the background; closing rw ends it.
func newLinePeer(t *testing.T, testEnd net.Conn) *linePeer {
	p := &linePeer{t: t, in: testEnd, lines: make(chan string, 64)}
	go p.readLines(testEnd)
	t.Cleanup(func() {
		testEnd.Close()
		for range p.lines {
		}
	})
	return p
}

// newPair connects a ClientSideConn serving cl to an AgentSideConn serving
// a over a net.Pipe.
func newPair(t *testing.T, a *fakeAgent, cl *fakeClient) *ClientSideConn {
	t.Helper()
	agentEnd, clientEnd := net.Pipe()
	a.conn = NewAgentSideConn(agentEnd, a, &ConnOptions{Logger: testLogger(t)})
	c := NewClientSideConn(clientEnd, cl, &ConnOptions{Logger: testLogger(t)})
	t.Cleanup(func() {
		c.Close()
		<-a.conn.Done()
	})
	return c
}

// newInitializedPair is newPair after a successful initialize.
func newInitializedPair(t *testing.T, a *fakeAgent, cl *fakeClient) *ClientSideConn {
	t.Helper()
	c := newPair(t, a, cl)
	if _, err := c.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}); err != nil {
		t.Fatal(err)
	}
	return c
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
const initResult = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[]}}`

func (p *linePeer) initialize() {
	p.t.Helper()
	p.send(initLine)
	p.expect(initResult)
}
