// toolcall.go: tool calls, their content and permission requests (acp-v1 §12,
// acp-subagents §6).

package acp

import (
	"encoding/json"
)

// ToolCallID identifies a tool call within a session.
type ToolCallID string

// ToolCall is the `tool_call` session update: a new tool invocation (acp-v1
// §12.1).
type ToolCall struct {
	ToolCallID ToolCallID `json:"toolCallId"`
	Title      string     `json:"title"`
	// Name is the tool's programmatic name (`read_file`,
	// `mcp__server__tool`); stable since schema 1.22 (acp-v1 §23.1).
	Name      string             `json:"name,omitempty"`
	Kind      ToolKind           `json:"kind,omitempty"`
	Status    ToolCallStatus     `json:"status,omitempty"`
	Content   []ToolCallContent  `json:"content,omitzero"`
	Locations []ToolCallLocation `json:"locations,omitzero"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// ToolCallUpdate is the `tool_call_update` session update and the `toolCall`
// of a permission request (acp-v1 §12.2): only ToolCallID is required, the
// rest overwrite; a non-nil Content or Locations (even empty) replaces the
// whole collection.
type ToolCallUpdate struct {
	ToolCallID ToolCallID `json:"toolCallId"`
	Title      string     `json:"title,omitempty"`
	// Name is the tool's programmatic name; omitted leaves it unchanged.
	Name      string             `json:"name,omitempty"`
	Kind      ToolKind           `json:"kind,omitempty"`
	Status    ToolCallStatus     `json:"status,omitempty"`
	Content   []ToolCallContent  `json:"content,omitzero"`
	Locations []ToolCallLocation `json:"locations,omitzero"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// ToolCallLocation is a file a tool call touches; Line is 1-based.
type ToolCallLocation struct {
	Path string  `json:"path"`
	Line *uint32 `json:"line,omitempty"`
	Meta Meta    `json:"_meta,omitempty"`
}

// ToolCallContent is one item of a tool call's output (acp-v1 §12.4):
// *ToolContent, *Diff, *Terminal or *SessionReference.
type ToolCallContent interface {
	// ToolContentType returns the item's `type` tag.
	ToolContentType() string
	isToolCallContent()
}

// ToolContent is a `content` item wrapping a content block.
type ToolContent struct {
	Content ContentBlock `json:"content"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// Diff is a `diff` item; OldText is nil for a new file.
type Diff struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText,omitempty"`
	NewText string  `json:"newText"`
	Meta    Meta    `json:"_meta,omitempty"`
}

// Terminal is a `terminal` item embedding a client terminal's live output.
type Terminal struct {
	TerminalID TerminalID `json:"terminalId"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// SessionReference is a `session` item linking a tool call to a known
// session, for display only (acp-subagents §6). Send it only to clients that
// opted into subagents, and always next to a text item.
type SessionReference struct {
	SessionID SessionID `json:"sessionId"`
	Meta      Meta      `json:"_meta,omitempty"`
}

func (*ToolContent) isToolCallContent()      {}
func (*Diff) isToolCallContent()             {}
func (*Terminal) isToolCallContent()         {}
func (*SessionReference) isToolCallContent() {}

// ToolContentType implements ToolCallContent.
func (*ToolContent) ToolContentType() string { return ToolContentTypeContent }

// ToolContentType implements ToolCallContent.
func (*Diff) ToolContentType() string { return ToolContentTypeDiff }

// ToolContentType implements ToolCallContent.
func (*Terminal) ToolContentType() string { return ToolContentTypeTerminal }

// ToolContentType implements ToolCallContent.
func (*SessionReference) ToolContentType() string { return ToolContentTypeSession }

// ToolText returns a `content` item holding a text block.
func ToolText(text string) *ToolContent { return &ToolContent{Content: TextBlock(text)} }

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c ToolContent) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ToolContentTypeContent, c)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c Diff) MarshalJSON() ([]byte, error) { return marshalVariant("type", ToolContentTypeDiff, c) }

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c Terminal) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ToolContentTypeTerminal, c)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c SessionReference) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ToolContentTypeSession, c)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ToolContent) UnmarshalJSON(b []byte) error { return toolContentDecoder.decode(b, c) }

var toolContentDecoder = newObjectDecoder[ToolContent](contentMember)

// UnmarshalToolCallContent decodes one tool call content item by its `type`
// tag.
func UnmarshalToolCallContent(b []byte) (ToolCallContent, error) { return toolCallContents.decode(b) }

var toolCallContents = taggedUnion[ToolCallContent]{name: "tool call content", key: "type",
	variants: map[string]func() ToolCallContent{
		ToolContentTypeContent:  func() ToolCallContent { return new(ToolContent) },
		ToolContentTypeDiff:     func() ToolCallContent { return new(Diff) },
		ToolContentTypeTerminal: func() ToolCallContent { return new(Terminal) },
		ToolContentTypeSession:  func() ToolCallContent { return new(SessionReference) },
	}}

// UnmarshalJSON implements json.Unmarshaler; a `sessionUpdate` key is
// ignored. ToolCall and ToolCallUpdate differ only in a tag option, so they
// share this decoder.
func (t *ToolCall) UnmarshalJSON(b []byte) error { return (*ToolCallUpdate)(t).UnmarshalJSON(b) }

// UnmarshalJSON implements json.Unmarshaler; a `sessionUpdate` key is
// ignored. Content and locations are lenient lists: a bad item is dropped,
// and a malformed name, kind or status is absent (acp-v1 §4).
func (t *ToolCallUpdate) UnmarshalJSON(b []byte) error { return toolCallDecoder.decode(b, t) }

var toolCallDecoder = newObjectDecoder[ToolCallUpdate](lenientString[string]("name"), lenientString[ToolKind]("kind"),
	lenientString[ToolCallStatus]("status"), lenientList("content", UnmarshalToolCallContent),
	lenientList("locations", decodeJSON[ToolCallLocation]))

// PermissionOption is one choice of a permission request (acp-v1 §12.5).
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     Meta                 `json:"_meta,omitempty"`
}

// RequestPermissionRequest is the params of session/request_permission.
type RequestPermissionRequest struct {
	SessionID SessionID          `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler. The tool call is written without a
// `sessionUpdate` tag: here it is not a session update.
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type toolCallBody ToolCallUpdate
	return json.Marshal(struct {
		SessionID SessionID          `json:"sessionId"`
		ToolCall  toolCallBody       `json:"toolCall"`
		Options   []PermissionOption `json:"options"`
		Meta      Meta               `json:"_meta,omitempty"`
	}{r.SessionID, toolCallBody(r.ToolCall), emptyIfNil(r.Options), r.Meta})
}

// Validate checks the required fields.
func (r *RequestPermissionRequest) Validate() error {
	switch {
	case r.SessionID == "":
		return invalidField("sessionId", "required")
	case r.ToolCall.ToolCallID == "":
		return invalidField("toolCall.toolCallId", "required")
	case r.Options == nil:
		return invalidField("options", "required")
	}
	return nil
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome RequestPermissionOutcome `json:"outcome"`
	Meta    Meta                     `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *RequestPermissionResponse) UnmarshalJSON(b []byte) error {
	return permissionResponseDecoder.decode(b, r)
}

var permissionResponseDecoder = newObjectDecoder[RequestPermissionResponse](unionMember("outcome", UnmarshalRequestPermissionOutcome))

// RequestPermissionOutcome is the user's decision: *SelectedPermissionOutcome
// or *CancelledPermissionOutcome.
type RequestPermissionOutcome interface {
	isRequestPermissionOutcome()
}

// SelectedPermissionOutcome is `{"outcome":"selected","optionId":…}`.
type SelectedPermissionOutcome struct {
	OptionID string `json:"optionId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// CancelledPermissionOutcome is `{"outcome":"cancelled"}`: the turn was
// cancelled.
type CancelledPermissionOutcome struct {
	Meta Meta `json:"_meta,omitempty"`
}

func (*SelectedPermissionOutcome) isRequestPermissionOutcome()  {}
func (*CancelledPermissionOutcome) isRequestPermissionOutcome() {}

// Selected returns the outcome selecting optionID.
func Selected(optionID string) *SelectedPermissionOutcome {
	return &SelectedPermissionOutcome{OptionID: optionID}
}

// MarshalJSON implements json.Marshaler, emitting the `outcome` tag.
func (o SelectedPermissionOutcome) MarshalJSON() ([]byte, error) {
	return marshalVariant("outcome", "selected", o)
}

// MarshalJSON implements json.Marshaler, emitting the `outcome` tag.
func (o CancelledPermissionOutcome) MarshalJSON() ([]byte, error) {
	return marshalVariant("outcome", "cancelled", o)
}

// UnmarshalRequestPermissionOutcome decodes an outcome by its `outcome` tag.
func UnmarshalRequestPermissionOutcome(b []byte) (RequestPermissionOutcome, error) {
	return permissionOutcomes.decode(b)
}

var permissionOutcomes = taggedUnion[RequestPermissionOutcome]{name: "permission outcome", key: "outcome",
	variants: map[string]func() RequestPermissionOutcome{
		"selected":  func() RequestPermissionOutcome { return new(SelectedPermissionOutcome) },
		"cancelled": func() RequestPermissionOutcome { return new(CancelledPermissionOutcome) },
	}}
