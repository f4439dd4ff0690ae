// client_side.go: the client's end of a connection — serves a Client, calls
// the Agent.

package acp

import (
	"context"
	"encoding/json"
	"io"
)

// Client is what an agent calls: one method per agent → client method of
// acp-v1 §5. The same dispatch rules as for [Agent] apply.
type Client interface {
	// SessionUpdate handles the session/update notification.
	SessionUpdate(ctx context.Context, n *SessionNotification) error
	RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, req *WriteTextFileRequest) (*WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, req *TerminalOutputRequest) (*TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, req *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, req *KillTerminalRequest) (*KillTerminalResponse, error)
	ReleaseTerminal(ctx context.Context, req *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error)
	CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error)
	// CompleteElicitation handles the elicitation/complete notification.
	CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification) error
}

// ClientSideConn is a connection seen from the client: it serves a [Client]
// and implements [Agent] to call the peer.
//
// A call returns only after every notification that arrived before its
// response was handled, so Prompt returns after the Client saw all of the
// turn's session/update notifications (unless the caller is itself a
// handler the dispatcher is waiting for, which would deadlock).
type ClientSideConn struct{ c *conn }

var _ Agent = (*ClientSideConn)(nil)

// NewClientSideConn starts serving cl over rwc. Closing the connection
// closes rwc.
func NewClientSideConn(rwc io.ReadWriteCloser, cl Client, opts *ConnOptions) *ClientSideConn {
	c := newConn(rwc, clientMethods(cl), cl, opts)
	c.barrier = true
	c.start()
	return &ClientSideConn{c: c}
}

func clientMethods(cl Client) map[string]methodInfo {
	return map[string]methodInfo{
		MethodSessionUpdate:            notificationMethod(cl.SessionUpdate),
		MethodSessionRequestPermission: requestMethod(false, cl.RequestPermission),
		MethodFsReadTextFile:           requestMethod(false, cl.ReadTextFile),
		MethodFsWriteTextFile:          requestMethod(false, cl.WriteTextFile),
		MethodTerminalCreate:           requestMethod(false, cl.CreateTerminal),
		MethodTerminalOutput:           requestMethod(false, cl.TerminalOutput),
		MethodTerminalWaitForExit:      requestMethod(false, cl.WaitForTerminalExit),
		MethodTerminalKill:             requestMethod(false, cl.KillTerminal),
		MethodTerminalRelease:          requestMethod(false, cl.ReleaseTerminal),
		MethodElicitationCreate:        requestMethod(false, cl.CreateElicitation),
		MethodElicitationComplete:      notificationMethod(cl.CompleteElicitation),
	}
}

// Done is closed once the connection is closed and all its goroutines,
// handlers included, have returned.
func (c *ClientSideConn) Done() <-chan struct{} { return c.c.done }

// Close closes the connection and waits like Done. Do not call it from a
// handler of this connection.
func (c *ClientSideConn) Close() error { return c.c.close() }

// Initialize calls initialize.
func (c *ClientSideConn) Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
	return callTyped[InitializeResponse](ctx, c.c, MethodInitialize, req)
}

// Authenticate calls authenticate.
func (c *ClientSideConn) Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error) {
	return callTyped[AuthenticateResponse](ctx, c.c, MethodAuthenticate, req)
}

// Logout calls logout.
func (c *ClientSideConn) Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error) {
	return callTyped[LogoutResponse](ctx, c.c, MethodLogout, orEmpty(req))
}

// NewSession calls session/new.
func (c *ClientSideConn) NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error) {
	return callTyped[NewSessionResponse](ctx, c.c, MethodSessionNew, req)
}

// LoadSession calls session/load; its replayed updates reach the Client
// before it returns.
func (c *ClientSideConn) LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error) {
	return callTyped[LoadSessionResponse](ctx, c.c, MethodSessionLoad, req)
}

// ResumeSession calls session/resume.
func (c *ClientSideConn) ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	return callTyped[ResumeSessionResponse](ctx, c.c, MethodSessionResume, req)
}

// CloseSession calls session/close.
func (c *ClientSideConn) CloseSession(ctx context.Context, req *CloseSessionRequest) (*CloseSessionResponse, error) {
	return callTyped[CloseSessionResponse](ctx, c.c, MethodSessionClose, req)
}

// ListSessions calls session/list.
func (c *ClientSideConn) ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error) {
	return callTyped[ListSessionsResponse](ctx, c.c, MethodSessionList, orEmpty(req))
}

// DeleteSession calls session/delete.
func (c *ClientSideConn) DeleteSession(ctx context.Context, req *DeleteSessionRequest) (*DeleteSessionResponse, error) {
	return callTyped[DeleteSessionResponse](ctx, c.c, MethodSessionDelete, req)
}

// SetSessionMode calls session/set_mode.
func (c *ClientSideConn) SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return callTyped[SetSessionModeResponse](ctx, c.c, MethodSessionSetMode, req)
}

// SetSessionConfigOption calls session/set_config_option.
func (c *ClientSideConn) SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return callTyped[SetSessionConfigOptionResponse](ctx, c.c, MethodSessionSetConfigOption, req)
}

// Prompt calls session/prompt. When ctx ends first it sends
// $/cancel_request and returns ctx.Err(); to stop a turn and still get its
// stop reason, send Cancel and keep waiting.
func (c *ClientSideConn) Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
	return callTyped[PromptResponse](ctx, c.c, MethodSessionPrompt, req)
}

// Cancel sends the session/cancel notification.
func (c *ClientSideConn) Cancel(_ context.Context, n *CancelNotification) error {
	return c.c.notify(MethodSessionCancel, n)
}

// Call sends any request (an extension method, a relayed one) and returns
// the raw result.
func (c *ClientSideConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.c.callRaw(ctx, method, params)
}

// Notify sends any notification.
func (c *ClientSideConn) Notify(_ context.Context, method string, params any) error {
	return c.c.notify(method, params)
}

// orEmpty sends a nil params pointer as {}.
func orEmpty[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
