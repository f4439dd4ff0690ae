// initialize.go: initialize, capabilities, authentication and logout
// (acp-v1 §6, §7; acp-subagents §2).

package acp

import (
	"encoding/json"
)

// InitializeRequest is the params of initialize (acp-v1 §6.1).
type InitializeRequest struct {
	ProtocolVersion    ProtocolVersion    `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities,omitzero"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               Meta               `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler. A missing or null
// protocolVersion decodes as -1 so Validate can reject it; a malformed
// clientInfo is absent.
func (r *InitializeRequest) UnmarshalJSON(b []byte) error {
	type alias InitializeRequest
	dec := func(b []byte) (alias, error) {
		a := alias{ProtocolVersion: -1}
		err := json.Unmarshal(b, &a)
		return a, err
	}
	a, err := dec(b)
	if err != nil {
		a, err = dropMalformed(b, err, dec, nil, "clientInfo")
	}
	if err != nil {
		return err
	}
	*r = InitializeRequest(a)
	return nil
}

// Validate checks that protocolVersion is present and a uint16.
func (r *InitializeRequest) Validate() error {
	if r.ProtocolVersion < 0 {
		return invalidField("protocolVersion", "required")
	}
	if r.ProtocolVersion > 65535 {
		return invalidField("protocolVersion", "must be an integer in 0..65535")
	}
	return nil
}

// InitializeResponse is the result of initialize (acp-v1 §6.2).
type InitializeResponse struct {
	ProtocolVersion   ProtocolVersion   `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities,omitzero"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              Meta              `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; nil AuthMethods is sent as [].
func (r InitializeResponse) MarshalJSON() ([]byte, error) {
	r.AuthMethods = emptyIfNil(r.AuthMethods)
	return marshalFields(r)
}

// UnmarshalJSON implements json.Unmarshaler; bad auth methods are dropped.
func (r *InitializeResponse) UnmarshalJSON(b []byte) error { return initializeDecoder.decode(b, r) }

var initializeDecoder = newObjectDecoder[InitializeResponse](lenientList("authMethods", UnmarshalAuthMethod))

// Implementation identifies a client or an agent.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports (acp-v1 §6.5,
// acp-subagents §2). Decoding is lenient: a malformed member is absent.
type ClientCapabilities struct {
	FS          FileSystemCapabilities    `json:"fs,omitzero"`
	Terminal    bool                      `json:"terminal,omitempty"`
	Session     ClientSessionCapabilities `json:"session,omitzero"`
	Auth        AuthCapabilities          `json:"auth,omitzero"`
	Elicitation ElicitationCapabilities   `json:"elicitation,omitzero"`
	// Subagents is the client's opt-in to subagent sessions: any object, even
	// empty, opts in; nil does not.
	Subagents *SubagentCapabilities `json:"subagents,omitempty"`
	Meta      Meta                  `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *ClientCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// FileSystemCapabilities gates fs/* calls.
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
	Meta          Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *FileSystemCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// ClientSessionCapabilities holds session-related client capabilities.
// Compaction and Notices (stable since schema 1.25, acp-v1 §23.1): a
// non-nil one lets the agent send compaction updates, resp. notices.
type ClientSessionCapabilities struct {
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	Compaction    *EmptyCapability                  `json:"compaction,omitempty"`
	Notices       *EmptyCapability                  `json:"notices,omitempty"`
	Meta          Meta                              `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *ClientSessionCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// SessionConfigOptionsCapabilities: a non-nil Boolean lets the agent send
// boolean config options.
type SessionConfigOptionsCapabilities struct {
	Boolean *EmptyCapability `json:"boolean,omitempty"`
	Meta    Meta             `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *SessionConfigOptionsCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// EmptyCapability is an object-valued capability with no members of its own:
// present (non-nil) means supported (acp-v1 §4).
type EmptyCapability struct {
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler; it fails for non-objects, so a
// malformed capability is dropped by its lenient parent.
func (c *EmptyCapability) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return &badValueError{reason: "must be an object"}
	}
	type alias EmptyCapability
	return json.Unmarshal(b, (*alias)(c))
}

// AuthCapabilities holds the client's authentication capabilities.
type AuthCapabilities struct {
	// Terminal lets the agent advertise type:"terminal" auth methods.
	Terminal bool `json:"terminal,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *AuthCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// ElicitationCapabilities: each mode is allowed only when present (acp-v1
// §6.5); `{}` allows none.
type ElicitationCapabilities struct {
	Form *EmptyCapability `json:"form,omitempty"`
	URL  *EmptyCapability `json:"url,omitempty"`
	Meta Meta             `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *ElicitationCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// SubagentCapabilities is the client's subagent opt-in object
// (acp-subagents §2).
type SubagentCapabilities = EmptyCapability

// AgentCapabilities is what the agent supports (acp-v1 §6.6). Decoding is
// lenient: a malformed member is absent.
type AgentCapabilities struct {
	LoadSession         bool                  `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities    `json:"promptCapabilities,omitzero"`
	McpCapabilities     McpCapabilities       `json:"mcpCapabilities,omitzero"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities,omitzero"`
	Auth                AgentAuthCapabilities `json:"auth,omitzero"`
	Meta                Meta                  `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *AgentCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// PromptCapabilities lists the prompt block types beyond text and
// resource_link.
type PromptCapabilities struct {
	Image           bool `json:"image,omitempty"`
	Audio           bool `json:"audio,omitempty"`
	EmbeddedContext bool `json:"embeddedContext,omitempty"`
	Meta            Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *PromptCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// McpCapabilities lists the MCP transports beyond stdio.
type McpCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *McpCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// SessionCapabilities: each non-nil member means its method is implemented.
// Fork (session/fork) is unstable: only schema.unstable.json has it
// (rfd:session-fork, acp-v1 §25).
type SessionCapabilities struct {
	List                  *EmptyCapability `json:"list,omitempty"`
	Delete                *EmptyCapability `json:"delete,omitempty"`
	Resume                *EmptyCapability `json:"resume,omitempty"`
	Close                 *EmptyCapability `json:"close,omitempty"`
	AdditionalDirectories *EmptyCapability `json:"additionalDirectories,omitempty"`
	Fork                  *EmptyCapability `json:"fork,omitempty"`
	Meta                  Meta             `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *SessionCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// AgentAuthCapabilities: a non-nil Logout means logout is implemented.
type AgentAuthCapabilities struct {
	Logout *EmptyCapability `json:"logout,omitempty"`
	Meta   Meta             `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler leniently.
func (c *AgentAuthCapabilities) UnmarshalJSON(b []byte) error { return decodeLenient(b, c) }

// AuthMethod is a way to log in (acp-v1 §7.1): *AuthMethodAgent (no `type`)
// or *AuthMethodTerminal.
type AuthMethod interface {
	isAuthMethod()
}

// AuthMethodAgent is an agent-handled method, used with authenticate.
type AuthMethodAgent struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// AuthMethodTerminal is a method the client runs in a terminal; Env is a map,
// unlike the [EnvVariable] lists elsewhere.
type AuthMethodTerminal struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (*AuthMethodAgent) isAuthMethod()    {}
func (*AuthMethodTerminal) isAuthMethod() {}

// MarshalJSON implements json.Marshaler, emitting `"type":"terminal"`.
func (m AuthMethodTerminal) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", "terminal", m)
}

// UnmarshalAuthMethod decodes an auth method: no `type` is agent-handled.
func UnmarshalAuthMethod(b []byte) (AuthMethod, error) { return authMethods.decode(b) }

var authMethods = taggedUnion[AuthMethod]{name: "auth method", key: "type",
	untagged: func() AuthMethod { return new(AuthMethodAgent) },
	variants: map[string]func() AuthMethod{
		"terminal": func() AuthMethod { return new(AuthMethodTerminal) },
	}}

// AuthenticateRequest is the params of authenticate (acp-v1 §7.2).
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *AuthenticateRequest) Validate() error { return require("methodId", r.MethodID) }

// AuthenticateResponse is the (empty) result of authenticate.
type AuthenticateResponse = EmptyResponse

// LogoutRequest is the params of logout (acp-v1 §7.3); omitted params mean {}.
type LogoutRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

// LogoutResponse is the (empty) result of logout.
type LogoutResponse = EmptyResponse
