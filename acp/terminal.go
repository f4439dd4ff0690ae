// terminal.go: the client's terminal methods (acp-v1 §18).

package acp

// TerminalID identifies a client terminal; the client mints it.
type TerminalID string

// CreateTerminalRequest is the params of terminal/create.
type CreateTerminalRequest struct {
	SessionID       SessionID     `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args,omitempty"`
	Env             []EnvVariable `json:"env,omitempty"`
	Cwd             string        `json:"cwd,omitempty"`
	OutputByteLimit *uint64       `json:"outputByteLimit,omitempty"`
	Meta            Meta          `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler; bad args or env entries are
// dropped (acp-v1 §4).
func (r *CreateTerminalRequest) UnmarshalJSON(b []byte) error { return terminalDecoder.decode(b, r) }

var terminalDecoder = newObjectDecoder[CreateTerminalRequest](lenientList("args", decodeJSON[string]),
	lenientList("env", decodeJSON[EnvVariable]))

// Validate checks the required fields.
func (r *CreateTerminalRequest) Validate() error {
	return requireWithSession(r.SessionID, "command", r.Command)
}

// CreateTerminalResponse is the result of terminal/create.
type CreateTerminalResponse struct {
	TerminalID TerminalID `json:"terminalId"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// TerminalRequest is the shape of the requests that name a terminal.
type TerminalRequest struct {
	SessionID  SessionID  `json:"sessionId"`
	TerminalID TerminalID `json:"terminalId"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *TerminalRequest) Validate() error {
	return requireWithSession(r.SessionID, "terminalId", string(r.TerminalID))
}

// TerminalOutputRequest is the params of terminal/output.
type TerminalOutputRequest = TerminalRequest

// WaitForTerminalExitRequest is the params of terminal/wait_for_exit.
type WaitForTerminalExitRequest = TerminalRequest

// KillTerminalRequest is the params of terminal/kill.
type KillTerminalRequest = TerminalRequest

// ReleaseTerminalRequest is the params of terminal/release.
type ReleaseTerminalRequest = TerminalRequest

// TerminalOutputResponse is the result of terminal/output.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       Meta                `json:"_meta,omitempty"`
}

// TerminalExitStatus is how a terminal's command ended: ExitCode is nil when a
// signal killed it.
type TerminalExitStatus struct {
	ExitCode *uint32 `json:"exitCode"`
	Signal   *string `json:"signal"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// WaitForTerminalExitResponse is the result of terminal/wait_for_exit.
type WaitForTerminalExitResponse = TerminalExitStatus

// KillTerminalResponse is the (empty) result of terminal/kill.
type KillTerminalResponse = EmptyResponse

// ReleaseTerminalResponse is the (empty) result of terminal/release.
type ReleaseTerminalResponse = EmptyResponse
