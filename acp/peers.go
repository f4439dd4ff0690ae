// peers.go: the two directions of the protocol (acp-v1 §5) as interfaces,
// and the decoding of a method's params.

package acp

import (
	"context"
	"encoding/json"
)

// Agent is what a client calls: one method per client → agent method of
// acp-v1 §5. Served by a connection (acp/rpc), handlers run synchronously
// in arrival order until they return or detach; their context ends when
// the request is cancelled or the connection closes. Return an *Error (or
// wrap one) to choose the error code; a nil response is sent as the empty
// response.
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
	// ForkSession is the unstable session/fork (rfd:session-fork).
	ForkSession(ctx context.Context, req *ForkSessionRequest) (*ForkSessionResponse, error)
	// Cancel handles the session/cancel notification.
	Cancel(ctx context.Context, n *CancelNotification) error
}

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

// EmptyResponse is the shape of the results with no members of their own.
type EmptyResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

type validator interface{ Validate() error }

// DecodeParams decodes the params of a method into p and validates them
// (p's Validate method, when it has one). Every failure is an *Error with
// code -32602, naming the field when it is known.
func DecodeParams(raw json.RawMessage, p any) error {
	if err := json.Unmarshal(raw, p); err != nil {
		return paramsError("", err)
	}
	if v, ok := p.(validator); ok {
		return v.Validate()
	}
	return nil
}

// DecodeValidParams is [DecodeParams] for raw that is known to be one
// valid JSON value (a stream checked the whole line it came in): a p that
// decodes itself gets raw at once, without the validating scan of it that
// json.Unmarshal makes first. The result and the errors are
// DecodeParams's.
func DecodeValidParams(raw json.RawMessage, p any) error {
	u, ok := p.(json.Unmarshaler)
	if !ok || len(raw) == 0 {
		return DecodeParams(raw, p)
	}
	if err := u.UnmarshalJSON(raw); err != nil {
		return paramsError("", err)
	}
	if v, ok := p.(validator); ok {
		return v.Validate()
	}
	return nil
}
