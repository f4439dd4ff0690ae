package acp

import (
	"context"
	"net"
	"sync"
	"testing"
)

// fakeAgent is an Agent whose methods call optional hooks.
type fakeAgent struct {
	conn *AgentSideConn // set right after NewAgentSideConn

	initialize func(context.Context, *InitializeRequest) (*InitializeResponse, error)
	newSession func(context.Context, *NewSessionRequest) (*NewSessionResponse, error)
	list       func(context.Context, *ListSessionsRequest) (*ListSessionsResponse, error)
	prompt     func(context.Context, *PromptRequest) (*PromptResponse, error)
	cancel     func(context.Context, *CancelNotification) error

	mu        sync.Mutex
	cancelled []SessionID
}

func (a *fakeAgent) Initialize(ctx context.Context, r *InitializeRequest) (*InitializeResponse, error) {
	if a.initialize != nil {
		return a.initialize(ctx, r)
	}
	return &InitializeResponse{ProtocolVersion: ProtocolVersion1}, nil
}

func (a *fakeAgent) Authenticate(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
	return nil, nil
}

func (a *fakeAgent) Logout(context.Context, *LogoutRequest) (*LogoutResponse, error) { return nil, nil }

func (a *fakeAgent) NewSession(ctx context.Context, r *NewSessionRequest) (*NewSessionResponse, error) {
	if a.newSession != nil {
		return a.newSession(ctx, r)
	}
	return &NewSessionResponse{SessionID: "s1"}, nil
}

func (a *fakeAgent) LoadSession(context.Context, *LoadSessionRequest) (*LoadSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) ResumeSession(context.Context, *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) CloseSession(context.Context, *CloseSessionRequest) (*CloseSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) ListSessions(ctx context.Context, r *ListSessionsRequest) (*ListSessionsResponse, error) {
	if a.list != nil {
		return a.list(ctx, r)
	}
	return &ListSessionsResponse{}, nil
}

func (a *fakeAgent) DeleteSession(context.Context, *DeleteSessionRequest) (*DeleteSessionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) SetSessionMode(context.Context, *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return nil, nil
}

func (a *fakeAgent) SetSessionConfigOption(context.Context, *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return nil, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
	if a.prompt != nil {
		return a.prompt(ctx, r)
	}
	return &PromptResponse{StopReason: StopReasonEndTurn}, nil
}

func (a *fakeAgent) Cancel(ctx context.Context, n *CancelNotification) error {
	a.mu.Lock()
	a.cancelled = append(a.cancelled, n.SessionID)
	a.mu.Unlock()
	if a.cancel != nil {
		return a.cancel(ctx, n)
	}
	return nil
}

func (a *fakeAgent) cancelledSessions() []SessionID {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]SessionID(nil), a.cancelled...)
}

// fakeClient is a Client whose methods call optional hooks.
type fakeClient struct {
	update     func(context.Context, *SessionNotification) error
	permission func(context.Context, *RequestPermissionRequest) (*RequestPermissionResponse, error)
	read       func(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error)
}

func (c *fakeClient) SessionUpdate(ctx context.Context, n *SessionNotification) error {
	if c.update != nil {
		return c.update(ctx, n)
	}
	return nil
}

func (c *fakeClient) RequestPermission(ctx context.Context, r *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	if c.permission != nil {
		return c.permission(ctx, r)
	}
	return &RequestPermissionResponse{Outcome: &CancelledPermissionOutcome{}}, nil
}

func (c *fakeClient) ReadTextFile(ctx context.Context, r *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	if c.read != nil {
		return c.read(ctx, r)
	}
	return nil, ErrResourceNotFound
}

func (c *fakeClient) WriteTextFile(context.Context, *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	return nil, nil
}

func (c *fakeClient) CreateTerminal(context.Context, *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return &CreateTerminalResponse{TerminalID: "t1"}, nil
}

func (c *fakeClient) TerminalOutput(context.Context, *TerminalOutputRequest) (*TerminalOutputResponse, error) {
	return &TerminalOutputResponse{}, nil
}

func (c *fakeClient) WaitForTerminalExit(context.Context, *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error) {
	return &WaitForTerminalExitResponse{}, nil
}

func (c *fakeClient) KillTerminal(context.Context, *KillTerminalRequest) (*KillTerminalResponse, error) {
	return nil, nil
}

func (c *fakeClient) ReleaseTerminal(context.Context, *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error) {
	return nil, nil
}

func (c *fakeClient) CreateElicitation(context.Context, *CreateElicitationRequest) (*CreateElicitationResponse, error) {
	return &CreateElicitationResponse{Action: ElicitationDecline}, nil
}

func (c *fakeClient) CompleteElicitation(context.Context, *CompleteElicitationNotification) error {
	return nil
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

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
const initResult = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[]}}`

func (p *linePeer) initialize() {
	p.t.Helper()
	p.send(initLine)
	p.expect(initResult)
}
