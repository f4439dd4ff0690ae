// agent_side.go: the agent's end of a connection — serves an Agent, calls
// the Client.

package rpc

import (
	"context"
	"io"

	"github.com/dshd/dshd/acp"
)

// AgentSideConn is a connection seen from the agent: it serves an [Agent]
// and implements [Client] to call the peer.
//
// Before a successful initialize, every other request is answered -32600
// and notifications are ignored; a repeated initialize is answered again.
type AgentSideConn struct{ endpoint }

var _ acp.Client = (*AgentSideConn)(nil)

// NewAgentSideConn starts serving a over rwc. Closing the connection closes
// rwc.
//
// The answer to one of our calls is held until every notification that
// arrived before it has been handled: a client that sends session/cancel
// and then answers a pending permission request "cancelled" must find the
// turn cancelled when the answer is read. A handler that waits for a turn
// to end (session/close) must therefore Detach first, or it would hold the
// notifications the turn's calls wait for.
func NewAgentSideConn(rwc io.ReadWriteCloser, a acp.Agent, opts *ConnOptions) *AgentSideConn {
	return &AgentSideConn{endpoint{startConn(rwc, agentMethods(a), a, true, opts)}}
}

// PrepareAgentSideConn is NewAgentSideConn for an agent that keeps the
// connection to call the client from its handlers: nothing is read from
// rwc until Start, so the agent can store the connection before any of its
// handlers runs.
func PrepareAgentSideConn(rwc io.ReadWriteCloser, a acp.Agent, opts *ConnOptions) *AgentSideConn {
	return &AgentSideConn{endpoint{newConn(rwc, agentMethods(a), a, true, opts)}}
}

// Start begins serving a connection from PrepareAgentSideConn; call it
// once.
func (a *AgentSideConn) Start() { a.c.start() }

func agentMethods(a acp.Agent) map[string]methodInfo {
	return map[string]methodInfo{
		acp.MethodInitialize:             requestMethod(false, a.Initialize),
		acp.MethodAuthenticate:           requestMethod(false, a.Authenticate),
		acp.MethodLogout:                 requestMethod(true, a.Logout),
		acp.MethodSessionNew:             requestMethod(false, a.NewSession),
		acp.MethodSessionLoad:            requestMethod(false, a.LoadSession),
		acp.MethodSessionResume:          requestMethod(false, a.ResumeSession),
		acp.MethodSessionClose:           requestMethod(false, a.CloseSession),
		acp.MethodSessionList:            requestMethod(true, a.ListSessions),
		acp.MethodSessionDelete:          requestMethod(false, a.DeleteSession),
		acp.MethodSessionSetMode:         requestMethod(false, a.SetSessionMode),
		acp.MethodSessionSetConfigOption: requestMethod(false, a.SetSessionConfigOption),
		acp.MethodSessionPrompt:          requestMethod(false, a.Prompt),
		acp.MethodSessionFork:            requestMethod(false, a.ForkSession),
		acp.MethodSessionCancel:          notificationMethod(a.Cancel),
	}
}

// SessionUpdateRaw writes a session/update whose params were encoded by
// MarshalSessionNotification, in call order like SessionUpdate.
func (a *AgentSideConn) SessionUpdateRaw(_ context.Context, params []byte) error {
	return notifyErr(a.c.stream.WriteNotificationRaw(acp.MethodSessionUpdate, params))
}

// SessionUpdate writes a session/update notification before returning, in
// call order, through the stream's fast path (ctx is not consulted: updates
// after a cancel must still go out).
func (a *AgentSideConn) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	return a.c.notify(acp.MethodSessionUpdate, n)
}

// RequestPermission calls session/request_permission.
func (a *AgentSideConn) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return callTyped[acp.RequestPermissionResponse](ctx, a.c, acp.MethodSessionRequestPermission, req)
}

// ReadTextFile calls fs/read_text_file.
func (a *AgentSideConn) ReadTextFile(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return callTyped[acp.ReadTextFileResponse](ctx, a.c, acp.MethodFsReadTextFile, req)
}

// WriteTextFile calls fs/write_text_file.
func (a *AgentSideConn) WriteTextFile(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	return callTyped[acp.WriteTextFileResponse](ctx, a.c, acp.MethodFsWriteTextFile, req)
}

// CreateTerminal calls terminal/create.
func (a *AgentSideConn) CreateTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	return callTyped[acp.CreateTerminalResponse](ctx, a.c, acp.MethodTerminalCreate, req)
}

// TerminalOutput calls terminal/output.
func (a *AgentSideConn) TerminalOutput(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	return callTyped[acp.TerminalOutputResponse](ctx, a.c, acp.MethodTerminalOutput, req)
}

// WaitForTerminalExit calls terminal/wait_for_exit.
func (a *AgentSideConn) WaitForTerminalExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	return callTyped[acp.WaitForTerminalExitResponse](ctx, a.c, acp.MethodTerminalWaitForExit, req)
}

// KillTerminal calls terminal/kill.
func (a *AgentSideConn) KillTerminal(ctx context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	return callTyped[acp.KillTerminalResponse](ctx, a.c, acp.MethodTerminalKill, req)
}

// ReleaseTerminal calls terminal/release.
func (a *AgentSideConn) ReleaseTerminal(ctx context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	return callTyped[acp.ReleaseTerminalResponse](ctx, a.c, acp.MethodTerminalRelease, req)
}

// CreateElicitation calls elicitation/create.
func (a *AgentSideConn) CreateElicitation(ctx context.Context, req *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	return callTyped[acp.CreateElicitationResponse](ctx, a.c, acp.MethodElicitationCreate, req)
}

// CompleteElicitation sends the elicitation/complete notification.
func (a *AgentSideConn) CompleteElicitation(_ context.Context, n *acp.CompleteElicitationNotification) error {
	return a.c.notify(acp.MethodElicitationComplete, n)
}

// callTyped calls method and decodes its result into a new R.
func callTyped[R any](ctx context.Context, c *conn, method string, params any) (*R, error) {
	r := new(R)
	if err := c.call(ctx, method, params, r); err != nil {
		return nil, err
	}
	return r, nil
}
