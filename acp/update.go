// update.go: session/update and its variants (acp-v1 §10, §13, §14).

package acp

import (
	"encoding/json"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID SessionID     `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
	Meta      Meta          `json:"_meta,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *SessionNotification) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID SessionID `json:"sessionId"`
		Update    rawSpan   `json:"update"`
		Meta      Meta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	u, err := decodeOne("update", w.Update, UnmarshalSessionUpdate)
	if err != nil {
		return err
	}
	*n = SessionNotification{SessionID: w.SessionID, Update: u, Meta: w.Meta}
	return nil
}

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
	var w struct {
		CompactionID CompactionID    `json:"compactionId"`
		Content      json.RawMessage `json:"content"`
		Meta         Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	block, err := decodeOne("content", w.Content, UnmarshalContentBlock)
	if err != nil {
		return err
	}
	*c = CompactionSummaryChunk{CompactionID: w.CompactionID, Content: block, Meta: w.Meta}
	return nil
}

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
	return marshalTagged("sessionUpdate", UpdateUserMessageChunk, chunkBody(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AgentMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalTagged("sessionUpdate", UpdateAgentMessageChunk, chunkBody(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AgentThoughtChunk) MarshalJSON() ([]byte, error) {
	return marshalTagged("sessionUpdate", UpdateAgentThoughtChunk, chunkBody(u))
}

// chunkBody is ContentChunk without methods, for marshalTagged.
type chunkBody ContentChunk

// UnmarshalJSON implements json.Unmarshaler.
func (c *ContentChunk) UnmarshalJSON(b []byte) error {
	var w struct {
		Content   json.RawMessage `json:"content"`
		MessageID json.RawMessage `json:"messageId"`
		Meta      Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	block, err := decodeOne("content", w.Content, UnmarshalContentBlock)
	if err != nil {
		return err
	}
	id, _ := jsontext.String(w.MessageID) // a malformed messageId is none (acp-v1 §4)
	*c = ContentChunk{Content: block, MessageID: MessageID(id), Meta: w.Meta}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (u *UserMessageChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// UnmarshalJSON implements json.Unmarshaler.
func (u *AgentMessageChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// UnmarshalJSON implements json.Unmarshaler.
func (u *AgentThoughtChunk) UnmarshalJSON(b []byte) error { return (*ContentChunk)(u).UnmarshalJSON(b) }

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ToolCall) MarshalJSON() ([]byte, error) {
	type alias ToolCall
	return marshalTagged("sessionUpdate", UpdateToolCall, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ToolCallUpdate) MarshalJSON() ([]byte, error) {
	type alias ToolCallUpdate
	return marshalTagged("sessionUpdate", UpdateToolCallUpdate, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u Plan) MarshalJSON() ([]byte, error) {
	type alias Plan
	u.Entries = emptyIfNil(u.Entries)
	return marshalTagged("sessionUpdate", UpdatePlan, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type alias AvailableCommandsUpdate
	u.AvailableCommands = emptyIfNil(u.AvailableCommands)
	return marshalTagged("sessionUpdate", UpdateAvailableCommandsUpdate, alias(u))
}

// UnmarshalJSON implements json.Unmarshaler; bad commands are dropped.
func (u *AvailableCommandsUpdate) UnmarshalJSON(b []byte) error {
	var w struct {
		AvailableCommands json.RawMessage `json:"availableCommands"`
		Meta              Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	cmds, err := decodeList(w.AvailableCommands, decodeJSON[AvailableCommand], true)
	if err != nil {
		return err
	}
	*u = AvailableCommandsUpdate{AvailableCommands: cmds, Meta: w.Meta}
	return nil
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CurrentModeUpdate) MarshalJSON() ([]byte, error) {
	type alias CurrentModeUpdate
	return marshalTagged("sessionUpdate", UpdateCurrentModeUpdate, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type alias ConfigOptionUpdate
	u.ConfigOptions = emptyIfNil(u.ConfigOptions)
	return marshalTagged("sessionUpdate", UpdateConfigOptionUpdate, alias(u))
}

// UnmarshalJSON implements json.Unmarshaler; bad options are dropped.
func (u *ConfigOptionUpdate) UnmarshalJSON(b []byte) error {
	var w struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
		Meta          Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	opts, err := decodeConfigOptions(w.ConfigOptions)
	if err != nil {
		return err
	}
	*u = ConfigOptionUpdate{ConfigOptions: opts, Meta: w.Meta}
	return nil
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u SessionInfoUpdate) MarshalJSON() ([]byte, error) {
	type alias SessionInfoUpdate
	return marshalTagged("sessionUpdate", UpdateSessionInfoUpdate, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u UsageUpdate) MarshalJSON() ([]byte, error) {
	type alias UsageUpdate
	return marshalTagged("sessionUpdate", UpdateUsageUpdate, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u Notice) MarshalJSON() ([]byte, error) {
	type alias Notice
	return marshalTagged("sessionUpdate", UpdateNotice, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CompactionUpdate) MarshalJSON() ([]byte, error) {
	type alias CompactionUpdate
	return marshalTagged("sessionUpdate", UpdateCompactionUpdate, alias(u))
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u CompactionSummaryChunk) MarshalJSON() ([]byte, error) {
	type alias CompactionSummaryChunk
	return marshalTagged("sessionUpdate", UpdateCompactionSummaryChunk, alias(u))
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
