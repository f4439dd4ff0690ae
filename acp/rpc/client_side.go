// client_side.go: the client's end of a connection — serves a Client, calls
// the Agent.

package rpc

import (
	"context"
	"io"

	"github.com/dshd/dshd/acp"
)

// ClientSideConn is a connection seen from the client: it serves a [Client]
// and implements [Agent] to call the peer.
//
// A call returns only after every notification that arrived before its
// response was handled, so Prompt returns after the Client saw all of the
// turn's session/update notifications (unless the caller is itself a
// handler the dispatcher is waiting for, which would deadlock).
type ClientSideConn struct{ endpoint }

var _ acp.Agent = (*ClientSideConn)(nil)

// NewClientSideConn starts serving cl over rwc. Closing the connection
// closes rwc.
func NewClientSideConn(rwc io.ReadWriteCloser, cl acp.Client, opts *ConnOptions) *ClientSideConn {
	return &ClientSideConn{endpoint{startConn(rwc, clientMethods(cl), cl, false, opts)}}
}

func clientMethods(cl acp.Client) map[string]methodInfo {
	return map[string]methodInfo{
		acp.MethodSessionUpdate:            notificationMethod(cl.SessionUpdate),
		acp.MethodSessionRequestPermission: requestMethod(false, cl.RequestPermission),
		acp.MethodFsReadTextFile:           requestMethod(false, cl.ReadTextFile),
		acp.MethodFsWriteTextFile:          requestMethod(false, cl.WriteTextFile),
		acp.MethodTerminalCreate:           requestMethod(false, cl.CreateTerminal),
		acp.MethodTerminalOutput:           requestMethod(false, cl.TerminalOutput),
		acp.MethodTerminalWaitForExit:      requestMethod(false, cl.WaitForTerminalExit),
		acp.MethodTerminalKill:             requestMethod(false, cl.KillTerminal),
		acp.MethodTerminalRelease:          requestMethod(false, cl.ReleaseTerminal),
		acp.MethodElicitationCreate:        requestMethod(false, cl.CreateElicitation),
		acp.MethodElicitationComplete:      notificationMethod(cl.CompleteElicitation),
	}
}

// Initialize calls initialize.
func (c *ClientSideConn) Initialize(ctx context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return callTyped[acp.InitializeResponse](ctx, c.c, acp.MethodInitialize, req)
}

// Authenticate calls authenticate.
func (c *ClientSideConn) Authenticate(ctx context.Context, req *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	return callTyped[acp.AuthenticateResponse](ctx, c.c, acp.MethodAuthenticate, req)
}

// Logout calls logout.
func (c *ClientSideConn) Logout(ctx context.Context, req *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	return callTyped[acp.LogoutResponse](ctx, c.c, acp.MethodLogout, orEmpty(req))
}

// NewSession calls session/new.
func (c *ClientSideConn) NewSession(ctx context.Context, req *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	return callTyped[acp.NewSessionResponse](ctx, c.c, acp.MethodSessionNew, req)
}

// LoadSession calls session/load; its replayed updates reach the Client
// before it returns.
func (c *ClientSideConn) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	return callTyped[acp.LoadSessionResponse](ctx, c.c, acp.MethodSessionLoad, req)
}

// ResumeSession calls session/resume.
func (c *ClientSideConn) ResumeSession(ctx context.Context, req *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	return callTyped[acp.ResumeSessionResponse](ctx, c.c, acp.MethodSessionResume, req)
}

// ForkSession calls the unstable session/fork.
func (c *ClientSideConn) ForkSession(ctx context.Context, req *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	return callTyped[acp.ForkSessionResponse](ctx, c.c, acp.MethodSessionFork, req)
}

// CloseSession calls session/close.
func (c *ClientSideConn) CloseSession(ctx context.Context, req *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	return callTyped[acp.CloseSessionResponse](ctx, c.c, acp.MethodSessionClose, req)
}

// ListSessions calls session/list.
func (c *ClientSideConn) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	return callTyped[acp.ListSessionsResponse](ctx, c.c, acp.MethodSessionList, orEmpty(req))
}

// DeleteSession calls session/delete.
func (c *ClientSideConn) DeleteSession(ctx context.Context, req *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	return callTyped[acp.DeleteSessionResponse](ctx, c.c, acp.MethodSessionDelete, req)
}

// SetSessionMode calls session/set_mode.
func (c *ClientSideConn) SetSessionMode(ctx context.Context, req *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	return callTyped[acp.SetSessionModeResponse](ctx, c.c, acp.MethodSessionSetMode, req)
}

// SetSessionConfigOption calls session/set_config_option.
func (c *ClientSideConn) SetSessionConfigOption(ctx context.Context, req *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	return callTyped[acp.SetSessionConfigOptionResponse](ctx, c.c, acp.MethodSessionSetConfigOption, req)
}

// Prompt calls session/prompt. When ctx ends first it sends
// $/cancel_request and returns ctx.Err(); to stop a turn and still get its
// stop reason, send Cancel and keep waiting.
func (c *ClientSideConn) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	return callTyped[acp.PromptResponse](ctx, c.c, acp.MethodSessionPrompt, req)
}

// Cancel sends the session/cancel notification.
func (c *ClientSideConn) Cancel(_ context.Context, n *acp.CancelNotification) error {
	return c.c.notify(acp.MethodSessionCancel, n)
}

// orEmpty sends a nil params pointer as {}.
func orEmpty[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
