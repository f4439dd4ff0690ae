// agent_side.go: the agent's end of a connection — serves an Agent, calls
// the Client.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// Agent is what a client calls: one method per client → agent method of
// acp-v1 §5. Handlers run synchronously in arrival order until they return
// or call [Detach]; their context ends when the request is cancelled or the
// connection closes. Return an *Error (or wrap one) to choose the error
// code; a nil response is sent as the empty response.
type Agent interface {
	Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error)
	Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error)
	Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error)
	NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error)
	LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error)
	ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error)
	CloseSession(ctx context.Context, req *CloseSessionRequest) (*CloseSessionResponse, error)
	ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error)
	DeleteSession(ctx context.Context, req *DeleteSessionRequest) (*DeleteSessionResponse, error)
	SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (*SetSessionModeResponse, error)
	SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error)
	Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error)
	// Cancel handles the session/cancel notification.
	Cancel(ctx context.Context, n *CancelNotification) error
}

// AgentSideConn is a connection seen from the agent: it serves an [Agent]
// and implements [Client] to call the peer.
//
// Before a successful initialize, every other request is answered -32600
// and notifications are ignored; a repeated initialize is answered again.
type AgentSideConn struct{ c *conn }

var _ Client = (*AgentSideConn)(nil)

// NewAgentSideConn starts serving a over rwc. Closing the connection closes
// rwc.
//
// The answer to one of our calls is held until every notification that
// arrived before it has been handled: a client that sends session/cancel
// and then answers a pending permission request "cancelled" must find the
// turn cancelled when the answer is read. A handler that waits for a turn
// to end (session/close) must therefore Detach first, or it would hold the
// notifications the turn's calls wait for.
func NewAgentSideConn(rwc io.ReadWriteCloser, a Agent, opts *ConnOptions) *AgentSideConn {
	c := newConn(rwc, agentMethods(a), a, opts)
	c.gate = true
	c.barrier = true
	c.start()
	return &AgentSideConn{c: c}
}

func agentMethods(a Agent) map[string]methodInfo {
	return map[string]methodInfo{
		MethodInitialize:             requestMethod(false, a.Initialize),
		MethodAuthenticate:           requestMethod(false, a.Authenticate),
		MethodLogout:                 requestMethod(true, a.Logout),
		MethodSessionNew:             requestMethod(false, a.NewSession),
		MethodSessionLoad:            requestMethod(false, a.LoadSession),
		MethodSessionResume:          requestMethod(false, a.ResumeSession),
		MethodSessionClose:           requestMethod(false, a.CloseSession),
		MethodSessionList:            requestMethod(true, a.ListSessions),
		MethodSessionDelete:          requestMethod(false, a.DeleteSession),
		MethodSessionSetMode:         requestMethod(false, a.SetSessionMode),
		MethodSessionSetConfigOption: requestMethod(false, a.SetSessionConfigOption),
		MethodSessionPrompt:          requestMethod(false, a.Prompt),
		MethodSessionCancel:          notificationMethod(a.Cancel),
	}
}

// Done is closed once the connection is closed and all its goroutines,
// handlers included, have returned.
func (a *AgentSideConn) Done() <-chan struct{} { return a.c.done }

// Close closes the connection and waits like Done. Do not call it from a
// handler of this connection.
func (a *AgentSideConn) Close() error { return a.c.close() }

// SessionUpdateRaw writes a session/update whose params were encoded by
// MarshalSessionNotification, in call order like SessionUpdate.
func (a *AgentSideConn) SessionUpdateRaw(_ context.Context, params []byte) error {
	if err := a.c.stream.WriteNotificationRaw(MethodSessionUpdate, params); err != nil {
		if errors.Is(err, ErrConnClosed) {
			return ErrConnClosed
		}
		return err
	}
	return nil
}

// SessionUpdate writes a session/update notification before returning, in
// call order, through the stream's fast path (ctx is not consulted: updates
// after a cancel must still go out).
func (a *AgentSideConn) SessionUpdate(_ context.Context, n *SessionNotification) error {
	return a.c.notify(MethodSessionUpdate, n)
}

// RequestPermission calls session/request_permission.
func (a *AgentSideConn) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return callTyped[RequestPermissionResponse](ctx, a.c, MethodSessionRequestPermission, req)
}

// ReadTextFile calls fs/read_text_file.
func (a *AgentSideConn) ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return callTyped[ReadTextFileResponse](ctx, a.c, MethodFsReadTextFile, req)
}

// WriteTextFile calls fs/write_text_file.
func (a *AgentSideConn) WriteTextFile(ctx context.Context, req *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	return callTyped[WriteTextFileResponse](ctx, a.c, MethodFsWriteTextFile, req)
}

// CreateTerminal calls terminal/create.
func (a *AgentSideConn) CreateTerminal(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return callTyped[CreateTerminalResponse](ctx, a.c, MethodTerminalCreate, req)
}

// TerminalOutput calls terminal/output.
func (a *AgentSideConn) TerminalOutput(ctx context.Context, req *TerminalOutputRequest) (*TerminalOutputResponse, error) {
	return callTyped[TerminalOutputResponse](ctx, a.c, MethodTerminalOutput, req)
}

// WaitForTerminalExit calls terminal/wait_for_exit.
func (a *AgentSideConn) WaitForTerminalExit(ctx context.Context, req *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error) {
	return callTyped[WaitForTerminalExitResponse](ctx, a.c, MethodTerminalWaitForExit, req)
}

// KillTerminal calls terminal/kill.
func (a *AgentSideConn) KillTerminal(ctx context.Context, req *KillTerminalRequest) (*KillTerminalResponse, error) {
	return callTyped[KillTerminalResponse](ctx, a.c, MethodTerminalKill, req)
}

// ReleaseTerminal calls terminal/release.
func (a *AgentSideConn) ReleaseTerminal(ctx context.Context, req *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error) {
	return callTyped[ReleaseTerminalResponse](ctx, a.c, MethodTerminalRelease, req)
}

// CreateElicitation calls elicitation/create.
func (a *AgentSideConn) CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error) {
	return callTyped[CreateElicitationResponse](ctx, a.c, MethodElicitationCreate, req)
}

// CompleteElicitation sends the elicitation/complete notification.
func (a *AgentSideConn) CompleteElicitation(_ context.Context, n *CompleteElicitationNotification) error {
	return a.c.notify(MethodElicitationComplete, n)
}

// Call sends any request (an extension method, a relayed one) and returns
// the raw result.
func (a *AgentSideConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return a.c.callRaw(ctx, method, params)
}

// Notify sends any notification, in call order with SessionUpdate.
func (a *AgentSideConn) Notify(_ context.Context, method string, params any) error {
	return a.c.notify(method, params)
}

// callTyped calls method and decodes its result into a new R.
func callTyped[R any](ctx context.Context, c *conn, method string, params any) (*R, error) {
	r := new(R)
	if err := c.call(ctx, method, params, r); err != nil {
		return nil, err
	}
	return r, nil
}
