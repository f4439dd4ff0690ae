// update.go: session/update and its variants (acp-v1 §10, §13, §14).

package acp

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID SessionID     `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
	Meta      Meta          `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *SessionNotification) UnmarshalJSON(b []byte) error { return notificationDecoder.decode(b, n) }

var notificationDecoder = newObjectDecoder[SessionNotification](unionMember("update", UnmarshalSessionUpdate))

// Validate checks the required fields.
func (n *SessionNotification) Validate() error {
	switch {
	case n.SessionID == "":
		return invalidField("sessionId", "required")
	case n.Update == nil:
		return invalidField("update", "required")
	}
	return nil
}

// SessionUpdate is the `update` of a session/update notification, tagged by
// `sessionUpdate`: the 11 stable variants of acp-v1 §10 (*UserMessageChunk,
// *AgentMessageChunk, *AgentThoughtChunk, *ToolCall, *ToolCallUpdate, *Plan,
// *AvailableCommandsUpdate, *CurrentModeUpdate, *ConfigOptionUpdate,
// *SessionInfoUpdate, *UsageUpdate), the three stable since schema 1.25
// (*Notice, *CompactionUpdate, *CompactionSummaryChunk; acp-v1 §23.1), and
// the subagent ones of acp-subagents (*SubagentUpdate, *SessionMessage,
// *SessionMessageChunk).
type SessionUpdate interface {
	// UpdateType returns the `sessionUpdate` tag.
	UpdateType() string
	isSessionUpdate()
}

// ContentChunk is the shape of the three message chunk updates: one content
// block, optionally with the message id all chunks of a message share.
type ContentChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID MessageID    `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// MessageID identifies a message within a session.
type MessageID string

// UserMessageChunk is the `user_message_chunk` update.
type UserMessageChunk ContentChunk

// AgentMessageChunk is the `agent_message_chunk` update.
type AgentMessageChunk ContentChunk

// AgentThoughtChunk is the `agent_thought_chunk` update.
type AgentThoughtChunk ContentChunk

// Plan is the `plan` update: the complete, current plan (acp-v1 §13).
type Plan struct {
	Entries []PlanEntry `json:"entries"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// PlanEntry is one task of a plan.
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     Meta              `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate is the `available_commands_update` update: the
// complete command list (acp-v1 §14).
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// AvailableCommand is a slash command, Name without the slash.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        Meta                   `json:"_meta,omitempty"`
}

// AvailableCommandInput describes a command's free-text input.
type AvailableCommandInput struct {
	Hint string `json:"hint"`
	Meta Meta   `json:"_meta,omitempty"`
}

// CurrentModeUpdate is the `current_mode_update` update (acp-v1 §10.8).
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ConfigOptionUpdate is the `config_option_update` update: the complete
// option set (acp-v1 §10.9).
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// SessionInfoUpdate is the `session_info_update` update: a patch where an
// omitted field is unchanged and null clears it (acp-v1 §10.10).
type SessionInfoUpdate struct {
	Title     Patch[string] `json:"title,omitzero"`
	UpdatedAt Patch[string] `json:"updatedAt,omitzero"`
	Meta      Meta          `json:"_meta,omitempty"`
}

// UsageUpdate is the `usage_update` update (acp-v1 §10.11).
type UsageUpdate struct {
	Used uint64 `json:"used"`
	Size uint64 `json:"size"`
	Cost *Cost  `json:"cost,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// Cost is a cumulative session cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// Notice is the `notice` update: information for the user that is not
// part of the conversation (rfd:session-notices). Send it only to a client
// that advertised session.notices, and never record or replay it: a
// notice is a live event, not history.
type Notice struct {
	// Severity is a presentation hint: one of the NoticeSeverity values
	// (or a `_`-prefixed custom one); required.
	Severity string `json:"severity"`
	// Title is required, non-empty plain text that stands alone.
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// Notice severities.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// CompactionID identifies a context compaction within a session.
type CompactionID string

// Compaction statuses.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
	CompactionCancelled  = "cancelled"
)

// CompactionUpdate is the `compaction_update` update (rfd:session-compaction):
// the first one for an id places the compaction in the timeline, later ones
// patch it. Summary, Error and Meta have patch semantics (omitted keeps,
// null clears); a non-empty Summary goes only with completed, Error only
// with failed. Send it only to a client that advertised session.compaction.
type CompactionUpdate struct {
	CompactionID CompactionID          `json:"compactionId"`
	Status       string                `json:"status"`
	Summary      Patch[[]ContentBlock] `json:"summary,omitzero"`
	Error        Patch[string]         `json:"error,omitzero"`
	Meta         Meta                  `json:"_meta,omitempty"`
}

// CompactionSummaryChunk is the `compaction_summary_chunk` update: one
// content block appended to a compaction's summary, between its
// in_progress update and its terminal one.
type CompactionSummaryChunk struct {
	CompactionID CompactionID `json:"compactionId"`
	Content      ContentBlock `json:"content"`
	Meta         Meta         `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *CompactionSummaryChunk) UnmarshalJSON(b []byte) error {
	return compactionChunkDecoder.decode(b, c)
}

var compactionChunkDecoder = newObjectDecoder[CompactionSummaryChunk](contentMember)

// contentMember is the `content` block of a chunk or a tool content item.
var contentMember = unionMember("content", UnmarshalContentBlock)

func (*UserMessageChunk) isSessionUpdate()        {}
func (*AgentMessageChunk) isSessionUpdate()       {}
func (*AgentThoughtChunk) isSessionUpdate()       {}
func (*ToolCall) isSessionUpdate()                {}
func (*ToolCallUpdate) isSessionUpdate()          {}
func (*Plan) isSessionUpdate()                    {}
func (*AvailableCommandsUpdate) isSessionUpdate() {}
func (*CurrentModeUpdate) isSessionUpdate()       {}
func (*ConfigOptionUpdate) isSessionUpdate()      {}
func (*SessionInfoUpdate) isSessionUpdate()       {}
func (*UsageUpdate) isSessionUpdate()             {}
func (*Notice) isSessionUpdate()                  {}
func (*CompactionUpdate) isSessionUpdate()        {}
func (*CompactionSummaryChunk) isSessionUpdate()  {}

// UpdateType implements SessionUpdate.
func (*UserMessageChunk) UpdateType() string { return UpdateUserMessageChunk }

// UpdateType implements SessionUpdate.
func (*AgentMessageChunk) UpdateType() string { return UpdateAgentMessageChunk }

// UpdateType implements SessionUpdate.
func (*AgentThoughtChunk) UpdateType() string { return UpdateAgentThoughtChunk }

// UpdateType implements SessionUpdate.
func (*ToolCall) UpdateType() string { return UpdateToolCall }

// UpdateType implements SessionUpdate.
func (*ToolCallUpdate) UpdateType() string { return UpdateToolCallUpdate }

// UpdateType implements SessionUpdate.
func (*Plan) UpdateType() string { return UpdatePlan }

// UpdateType implements SessionUpdate.
func (*AvailableCommandsUpdate) UpdateType() string { return UpdateAvailableCommandsUpdate }

// UpdateType implements SessionUpdate.
func (*CurrentModeUpdate) UpdateType() string { return UpdateCurrentModeUpdate }

// UpdateType implements SessionUpdate.
func (*ConfigOptionUpdate) UpdateType() string { return UpdateConfigOptionUpdate }

// UpdateType implements SessionUpdate.
func (*SessionInfoUpdate) UpdateType() string { return UpdateSessionInfoUpdate }

// UpdateType implements SessionUpdate.
func (*UsageUpdate) UpdateType() string { return UpdateUsageUpdate }

// UpdateType implements SessionUpdate.
func (*Notice) UpdateType() string { return UpdateNotice }

// UpdateType implements SessionUpdate.
func (*CompactionUpdate) UpdateType() string { return UpdateCompactionUpdate }

// UpdateType implements SessionUpdate.
func (*CompactionSummaryChunk) UpdateType() string { return UpdateCompactionSummaryChunk }

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u UserMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateUserMessageChunk, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AgentMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateAgentMessageChunk, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AgentThoughtChunk) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateAgentThoughtChunk, u)
}

// UnmarshalJSON implements json.Unmarshaler.
// A malformed messageId is none (acp-v1 §4).
func (c *ContentChunk) UnmarshalJSON(b []byte) error { return chunkDecoder.decode(b, c) }

var chunkDecoder = newObjectDecoder[ContentChunk](contentMember, lenientString[MessageID]("messageId"))

// UnmarshalJSON implements json.Unmarshaler.
func (u *UserMessageChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// UnmarshalJSON implements json.Unmarshaler.
func (u *AgentMessageChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// UnmarshalJSON implements json.Unmarshaler.
func (u *AgentThoughtChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ToolCall) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateToolCall, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ToolCallUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateToolCallUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u Plan) MarshalJSON() ([]byte, error) {
	u.Entries = emptyIfNil(u.Entries)
	return marshalVariant("sessionUpdate", UpdatePlan, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	u.AvailableCommands = emptyIfNil(u.AvailableCommands)
	return marshalVariant("sessionUpdate", UpdateAvailableCommandsUpdate, u)
}

// UnmarshalJSON implements json.Unmarshaler; bad commands are dropped.
func (u *AvailableCommandsUpdate) UnmarshalJSON(b []byte) error { return commandsDecoder.decode(b, u) }

var commandsDecoder = newObjectDecoder[AvailableCommandsUpdate](listMember("availableCommands", decodeJSON[AvailableCommand]))

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CurrentModeUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateCurrentModeUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	u.ConfigOptions = emptyIfNil(u.ConfigOptions)
	return marshalVariant("sessionUpdate", UpdateConfigOptionUpdate, u)
}

// UnmarshalJSON implements json.Unmarshaler; bad options are dropped.
func (u *ConfigOptionUpdate) UnmarshalJSON(b []byte) error { return configUpdateDecoder.decode(b, u) }

var configUpdateDecoder = newObjectDecoder[ConfigOptionUpdate](configOptionsMember)

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u SessionInfoUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateSessionInfoUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u UsageUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateUsageUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u Notice) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateNotice, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CompactionUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateCompactionUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CompactionSummaryChunk) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateCompactionSummaryChunk, u)
}

// UnmarshalSessionUpdate decodes one update by its `sessionUpdate` tag.
func UnmarshalSessionUpdate(b []byte) (SessionUpdate, error) { return sessionUpdates.decode(b) }

var sessionUpdates = taggedUnion[SessionUpdate]{name: "session update", key: "sessionUpdate", tagErrors: true,
	variants: map[string]func() SessionUpdate{
		UpdateUserMessageChunk:        func() SessionUpdate { return new(UserMessageChunk) },
		UpdateAgentMessageChunk:       func() SessionUpdate { return new(AgentMessageChunk) },
		UpdateAgentThoughtChunk:       func() SessionUpdate { return new(AgentThoughtChunk) },
		UpdateToolCall:                func() SessionUpdate { return new(ToolCall) },
		UpdateToolCallUpdate:          func() SessionUpdate { return new(ToolCallUpdate) },
		UpdatePlan:                    func() SessionUpdate { return new(Plan) },
		UpdateAvailableCommandsUpdate: func() SessionUpdate { return new(AvailableCommandsUpdate) },
		UpdateCurrentModeUpdate:       func() SessionUpdate { return new(CurrentModeUpdate) },
		UpdateConfigOptionUpdate:      func() SessionUpdate { return new(ConfigOptionUpdate) },
		UpdateSessionInfoUpdate:       func() SessionUpdate { return new(SessionInfoUpdate) },
		UpdateUsageUpdate:             func() SessionUpdate { return new(UsageUpdate) },
		UpdateNotice:                  func() SessionUpdate { return new(Notice) },
		UpdateCompactionUpdate:        func() SessionUpdate { return new(CompactionUpdate) },
		UpdateCompactionSummaryChunk:  func() SessionUpdate { return new(CompactionSummaryChunk) },
		UpdateSubagentUpdate:          func() SessionUpdate { return new(SubagentUpdate) },
		UpdateSessionMessage:          func() SessionUpdate { return new(SessionMessage) },
		UpdateSessionMessageChunk:     func() SessionUpdate { return new(SessionMessageChunk) },
	}}
