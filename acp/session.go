// session.go: session setup and management methods and MCP server
// configurations (acp-v1 §8, §15).

package acp

import (
	"encoding/json"
	"fmt"
)

// SessionID identifies a session; it is opaque.
type SessionID string

// NewSessionRequest is the params of session/new (acp-v1 §8.3).
type NewSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	McpServers            []McpServer `json:"mcpServers"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitzero"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; nil McpServers is sent as [].
func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	r.McpServers = emptyIfNil(r.McpServers)
	return marshalFields(r)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *NewSessionRequest) UnmarshalJSON(b []byte) error {
	return newSessionRequestDecoder.decode(b, r)
}

var newSessionRequestDecoder = newObjectDecoder[NewSessionRequest](setupMembers...)

// Validate checks the required fields. Whether cwd is absolute is the
// server's business.
func (r *NewSessionRequest) Validate() error {
	return validateSetup(r.Cwd, r.McpServers, true, r.AdditionalDirectories)
}

// validateSetup checks what session/new, load, resume and fork share, in
// this order: cwd, mcpServers where the method requires it, the
// directories, the servers.
func validateSetup(cwd string, servers []McpServer, serversRequired bool, dirs []string) error {
	switch {
	case cwd == "":
		return invalidField("cwd", "required")
	case serversRequired && servers == nil:
		return invalidField("mcpServers", "required")
	}
	if err := validateDirectories(dirs); err != nil {
		return err
	}
	return validateMcpServers(servers)
}

// setupMembers are the additionalDirectories and mcpServers of a
// session/new, session/load, session/resume or session/fork request, each
// decoded by its own rule below.
var setupMembers = []member{memberOf("additionalDirectories", decodeDirectories), memberOf("mcpServers", decodeMcpServers)}

// decodeDirectories decodes additionalDirectories, rejecting `null`, which
// acp-v1 §8.7 says is invalid (unlike an omitted field), and anything that
// is not an array of strings.
func decodeDirectories(raw []byte) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	if isNull(raw) {
		return nil, invalidField("additionalDirectories", "must be an array of absolute paths, not null")
	}
	var dirs []string
	if err := json.Unmarshal(raw, &dirs); err != nil {
		return nil, invalidField("additionalDirectories", "must be an array of strings")
	}
	return dirs, nil
}

// validateDirectories rejects empty (or null) additionalDirectories entries;
// whether they are absolute is the server's check.
func validateDirectories(dirs []string) error {
	for i, d := range dirs {
		if d == "" {
			return invalidField(fmt.Sprintf("additionalDirectories[%d]", i), "must be a non-empty path")
		}
	}
	return nil
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     SessionID             `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler; bad config options are dropped.
func (r *NewSessionResponse) UnmarshalJSON(b []byte) error {
	return newSessionResponseDecoder.decode(b, r)
}

var newSessionResponseDecoder = newObjectDecoder[NewSessionResponse](configOptionsMember)

// LoadSessionRequest is the params of session/load (acp-v1 §8.4).
type LoadSessionRequest struct {
	SessionID             SessionID   `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	McpServers            []McpServer `json:"mcpServers"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitzero"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; nil McpServers is sent as [].
func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	r.McpServers = emptyIfNil(r.McpServers)
	return marshalFields(r)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *LoadSessionRequest) UnmarshalJSON(b []byte) error {
	return loadSessionRequestDecoder.decode(b, r)
}

var loadSessionRequestDecoder = newObjectDecoder[LoadSessionRequest](setupMembers...)

// Validate checks the required fields.
func (r *LoadSessionRequest) Validate() error {
	if err := requireSession(r.SessionID); err != nil {
		return err
	}
	return validateSetup(r.Cwd, r.McpServers, true, r.AdditionalDirectories)
}

// LoadSessionResponse is the result of session/load.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler; bad config options are dropped.
func (r *LoadSessionResponse) UnmarshalJSON(b []byte) error {
	return loadSessionResponseDecoder.decode(b, r)
}

var loadSessionResponseDecoder = newObjectDecoder[LoadSessionResponse](configOptionsMember)

// ResumeSessionRequest is the params of session/resume (acp-v1 §8.5);
// mcpServers is optional here.
type ResumeSessionRequest struct {
	SessionID             SessionID   `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	McpServers            []McpServer `json:"mcpServers,omitzero"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitzero"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler. The request has the fields of
// session/load (only mcpServers is optional), and shares its decoder.
func (r *ResumeSessionRequest) UnmarshalJSON(b []byte) error {
	return (*LoadSessionRequest)(r).UnmarshalJSON(b)
}

// Validate checks the required fields.
func (r *ResumeSessionRequest) Validate() error {
	if err := requireSession(r.SessionID); err != nil {
		return err
	}
	return validateSetup(r.Cwd, r.McpServers, false, r.AdditionalDirectories)
}

// ResumeSessionResponse is the result of session/resume.
type ResumeSessionResponse = LoadSessionResponse

// SessionRequest is the shape of the params that name a session and
// nothing else.
type SessionRequest struct {
	SessionID SessionID `json:"sessionId"`
	Meta      Meta      `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *SessionRequest) Validate() error { return requireSession(r.SessionID) }

// CloseSessionRequest is the params of session/close (acp-v1 §8.6).
type CloseSessionRequest = SessionRequest

// CloseSessionResponse is the (empty) result of session/close.
type CloseSessionResponse = EmptyResponse

// ListSessionsRequest is the params of session/list (acp-v1 §8.8); omitted
// params mean {}.
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; nil Sessions is sent as [].
func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	r.Sessions = emptyIfNil(r.Sessions)
	return marshalFields(r)
}

// SessionInfo describes one session in a list.
type SessionInfo struct {
	SessionID             SessionID `json:"sessionId"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitzero"`
	Title                 string    `json:"title,omitempty"`
	UpdatedAt             string    `json:"updatedAt,omitempty"`
	Meta                  Meta      `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of session/delete (acp-v1 §8.9).
type DeleteSessionRequest = SessionRequest

// DeleteSessionResponse is the (empty) result of session/delete.
type DeleteSessionResponse = EmptyResponse

// SessionModeState is the legacy mode set of a session (acp-v1 §15).
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
	Meta           Meta          `json:"_meta,omitempty"`
}

// SessionMode is one mode.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID SessionID `json:"sessionId"`
	ModeID    string    `json:"modeId"`
	Meta      Meta      `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *SetSessionModeRequest) Validate() error {
	return requireWithSession(r.SessionID, "modeId", r.ModeID)
}

// SetSessionModeResponse is the (empty) result of session/set_mode.
type SetSessionModeResponse = EmptyResponse

// require reports an empty value of the required string member field.
func require(field, value string) error {
	if value == "" {
		return invalidField(field, "required")
	}
	return nil
}

func requireSession(id SessionID) error { return require("sessionId", string(id)) }

// requireWithSession reports an empty value of field as required, then a
// missing sessionId: the checks of a session-scoped request with one other
// required member.
func requireWithSession(id SessionID, field, value string) error {
	if err := require(field, value); err != nil {
		return err
	}
	return requireSession(id)
}

// McpServer is an MCP server the agent should connect to (acp-v1 §8.2):
// *McpServerStdio (no `type`), *McpServerHTTP or *McpServerSSE.
type McpServer interface {
	// ServerName returns the server's name.
	ServerName() string
	isMcpServer()
}

// McpServerStdio is a stdio MCP server; Command is absolute.
type McpServerStdio struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Args    []string      `json:"args"`
	Env     []EnvVariable `json:"env"`
	Meta    Meta          `json:"_meta,omitempty"`
}

// McpServerHTTP is a `type: "http"` MCP server.
type McpServerHTTP struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Headers []HTTPHeader `json:"headers"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// McpServerSSE is a `type: "sse"` MCP server; it has the members of
// [McpServerHTTP].
type McpServerSSE McpServerHTTP

// EnvVariable is one environment variable.
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// HTTPHeader is one HTTP header; it has the members of [EnvVariable], a
// name and a value.
type HTTPHeader EnvVariable

func (*McpServerStdio) isMcpServer() {}
func (*McpServerHTTP) isMcpServer()  {}
func (*McpServerSSE) isMcpServer()   {}

// ServerName implements McpServer.
func (s *McpServerStdio) ServerName() string { return s.Name }

// ServerName implements McpServer.
func (s *McpServerHTTP) ServerName() string { return s.Name }

// ServerName implements McpServer.
func (s *McpServerSSE) ServerName() string { return s.Name }

// MarshalJSON implements json.Marshaler; nil lists are sent as [].
func (s McpServerStdio) MarshalJSON() ([]byte, error) {
	s.Args = emptyIfNil(s.Args)
	s.Env = emptyIfNil(s.Env)
	return marshalFields(s)
}

// MarshalJSON implements json.Marshaler, emitting `"type":"http"`.
func (s McpServerHTTP) MarshalJSON() ([]byte, error) { return s.marshalAs("http") }

// MarshalJSON implements json.Marshaler, emitting `"type":"sse"`.
func (s McpServerSSE) MarshalJSON() ([]byte, error) { return McpServerHTTP(s).marshalAs("sse") }

// marshalAs encodes an HTTP or SSE server with its `type` tag; nil
// Headers is sent as [].
func (s McpServerHTTP) marshalAs(tag string) ([]byte, error) {
	s.Headers = emptyIfNil(s.Headers)
	return marshalVariant("type", tag, s)
}

// UnmarshalMcpServer decodes an MCP server: no `type` (or "stdio") is stdio.
func UnmarshalMcpServer(b []byte) (McpServer, error) { return mcpServers.decode(b) }

var mcpServers = taggedUnion[McpServer]{name: "mcp server", key: "type",
	untagged: func() McpServer { return new(McpServerStdio) },
	variants: map[string]func() McpServer{
		"stdio": func() McpServer { return new(McpServerStdio) },
		"http":  func() McpServer { return new(McpServerHTTP) },
		"sse":   func() McpServer { return new(McpServerSSE) },
	}}

// decodeMcpServers decodes mcpServers strictly: a malformed entry fails the
// request with -32602 rather than silently dropping a server the client
// asked for (our choice; acp-v1 §4 would allow dropping it). null is an
// empty list, as the schema reads it (x-deserialize-default-on-null);
// absent stays nil, so a request that requires the member can say so.
func decodeMcpServers(b []byte) ([]McpServer, error) {
	if isNull(b) {
		return []McpServer{}, nil
	}
	servers, err := decodeList(b, UnmarshalMcpServer, false)
	if err != nil {
		return nil, paramsError("mcpServers", err)
	}
	return servers, nil
}

func validateMcpServers(servers []McpServer) error {
	for i, s := range servers {
		field := fmt.Sprintf("mcpServers[%d]", i)
		switch s := s.(type) {
		case nil:
			return invalidField(field, "null entry")
		case *McpServerStdio:
			if s.Name == "" || s.Command == "" {
				return invalidField(field, "name and command are required")
			}
		case *McpServerHTTP:
			if s.Name == "" || s.URL == "" {
				return invalidField(field, "name and url are required")
			}
		case *McpServerSSE:
			if s.Name == "" || s.URL == "" {
				return invalidField(field, "name and url are required")
			}
		}
	}
	return nil
}

// ForkSessionRequest is the params of session/fork (unstable,
// rfd:session-fork): a new session that starts from sessionId's history.
// It has the fields of session/resume: the options of session/load, with
// mcpServers optional.
type ForkSessionRequest ResumeSessionRequest

// UnmarshalJSON implements json.Unmarshaler; it shares session/load's
// decoder.
func (r *ForkSessionRequest) UnmarshalJSON(b []byte) error {
	return (*LoadSessionRequest)(r).UnmarshalJSON(b)
}

// Validate checks the required fields.
func (r *ForkSessionRequest) Validate() error { return (*ResumeSessionRequest)(r).Validate() }

// ForkSessionResponse is the result of session/fork: the new session's id
// and, as for session/new, its modes and config options.
type ForkSessionResponse = NewSessionResponse
