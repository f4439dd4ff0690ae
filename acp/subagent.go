// subagent.go: subagent sessions — subagent_update, session_message(_chunk)
// and work states (acp-subagents §2–§6; stabilized 2026-11-20, shapes from
// schema.unstable.json of SDK 2.4.0).

package acp

import (
	"encoding/json"
)

// SubagentUpdate is the `subagent_update` session update, sent on the
// immediate parent's stream: the first one for a SessionID announces the
// child, later ones patch it (acp-subagents §3). Every field but SessionID is
// a [Patch]: omitted keeps, null clears, a value replaces.
type SubagentUpdate struct {
	SessionID             SessionID                          `json:"sessionId"`
	Title                 Patch[string]                      `json:"title,omitzero"`
	Description           Patch[string]                      `json:"description,omitzero"`
	Capabilities          Patch[SubagentSessionCapabilities] `json:"capabilities,omitzero"`
	State                 Patch[StateUpdate]                 `json:"state,omitzero"`
	Cwd                   Patch[string]                      `json:"cwd,omitzero"`
	AdditionalDirectories Patch[[]string]                    `json:"additionalDirectories,omitzero"`
	Meta                  Patch[Meta]                        `json:"_meta,omitzero"`
}

// SubagentSessionCapabilities is what the client may do to a child: a non-nil
// Cancel allows session/cancel for it.
type SubagentSessionCapabilities struct {
	Cancel *EmptyCapability `json:"cancel,omitempty"`
	Meta   Meta             `json:"_meta,omitempty"`
}

// SessionMessage is the `session_message` update: an upsert, keyed by
// MessageID, of a message between sessions (acp-subagents §5).
type SessionMessage struct {
	MessageID          MessageID             `json:"messageId"`
	SenderSessionID    Patch[SessionID]      `json:"senderSessionId,omitzero"`
	RecipientSessionID Patch[SessionID]      `json:"recipientSessionId,omitzero"`
	SenderMessageID    Patch[MessageID]      `json:"senderMessageId,omitzero"`
	RecipientMessageID Patch[MessageID]      `json:"recipientMessageId,omitzero"`
	Content            Patch[[]ContentBlock] `json:"content,omitzero"`
	Meta               Patch[Meta]           `json:"_meta,omitzero"`
}

// SessionMessageChunk is the `session_message_chunk` update: it appends one
// block to a message and never carries participants.
type SessionMessageChunk struct {
	MessageID MessageID    `json:"messageId"`
	Content   ContentBlock `json:"content"`
	Meta      Meta         `json:"_meta,omitempty"`
}

func (*SubagentUpdate) isSessionUpdate()      {}
func (*SessionMessage) isSessionUpdate()      {}
func (*SessionMessageChunk) isSessionUpdate() {}

// UpdateType implements SessionUpdate.
func (*SubagentUpdate) UpdateType() string { return UpdateSubagentUpdate }

// UpdateType implements SessionUpdate.
func (*SessionMessage) UpdateType() string { return UpdateSessionMessage }

// UpdateType implements SessionUpdate.
func (*SessionMessageChunk) UpdateType() string { return UpdateSessionMessageChunk }

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag;
// omitted patches are left out.
func (u SubagentUpdate) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateSubagentUpdate, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u SessionMessage) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateSessionMessage, u)
}

// MarshalJSON implements json.Marshaler, emitting the `sessionUpdate` tag.
func (u SessionMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalVariant("sessionUpdate", UpdateSessionMessageChunk, u)
}

// UnmarshalJSON implements json.Unmarshaler.
func (u *SessionMessageChunk) UnmarshalJSON(b []byte) error { return messageChunkDecoder.decode(b, u) }

var messageChunkDecoder = newObjectDecoder[SessionMessageChunk](contentMember)

// StateUpdate is a whole snapshot of a child's work state, tagged by `state`
// (acp-subagents §4): *RunningState, *RequiresActionState, *IdleState,
// *UnknownState, or *OtherState for any other value (kept verbatim; never
// read it as idle).
type StateUpdate interface {
	// StateName returns the `state` tag.
	StateName() string
	isStateUpdate()
}

// RunningState: foreground work is in progress.
type RunningState struct {
	Meta Meta `json:"_meta,omitempty"`
}

// RequiresActionState: work waits for the user.
type RequiresActionState struct {
	Meta Meta `json:"_meta,omitempty"`
}

// IdleState: ready for more work, not terminated. StopReason may be any
// [StopReason] including [StopReasonError] (then Error should be set), or
// empty when not reported; Usage covers the work unit that just ended.
type IdleState struct {
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      *Error     `json:"error,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// UnknownState: the agent can no longer observe the child.
type UnknownState struct {
	Meta Meta `json:"_meta,omitempty"`
}

// OtherState is a state this package does not know; Raw is the whole
// object, written back unchanged.
type OtherState struct {
	State string
	Raw   json.RawMessage
}

// Usage counts the tokens of a unit of work: a subagent's (acp-subagents
// §4) or a prompt turn's ([PromptResponse], unstable). The optional counts
// are nil when the model does not report them.
type Usage struct {
	TotalTokens       uint64  `json:"totalTokens"`
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
	Meta              Meta    `json:"_meta,omitempty"`
}

func (*RunningState) isStateUpdate()        {}
func (*RequiresActionState) isStateUpdate() {}
func (*IdleState) isStateUpdate()           {}
func (*UnknownState) isStateUpdate()        {}
func (*OtherState) isStateUpdate()          {}

// StateName implements StateUpdate.
func (*RunningState) StateName() string { return StateRunning }

// StateName implements StateUpdate.
func (*RequiresActionState) StateName() string { return StateRequiresAction }

// StateName implements StateUpdate.
func (*IdleState) StateName() string { return StateIdle }

// StateName implements StateUpdate.
func (*UnknownState) StateName() string { return StateUnknown }

// StateName implements StateUpdate.
func (s *OtherState) StateName() string { return s.State }

// MarshalJSON implements json.Marshaler, emitting the `state` tag.
func (s RunningState) MarshalJSON() ([]byte, error) { return marshalVariant("state", StateRunning, s) }

// MarshalJSON implements json.Marshaler, emitting the `state` tag.
func (s RequiresActionState) MarshalJSON() ([]byte, error) {
	return marshalVariant("state", StateRequiresAction, s)
}

// MarshalJSON implements json.Marshaler, emitting the `state` tag.
func (s IdleState) MarshalJSON() ([]byte, error) { return marshalVariant("state", StateIdle, s) }

// MarshalJSON implements json.Marshaler, emitting the `state` tag.
func (s UnknownState) MarshalJSON() ([]byte, error) { return marshalVariant("state", StateUnknown, s) }

// MarshalJSON implements json.Marshaler: Raw, or just the tag.
func (s OtherState) MarshalJSON() ([]byte, error) { return marshalUnknown("state", s.State, s.Raw) }

// UnmarshalJSON implements json.Unmarshaler leniently: a malformed
// stopReason, error or usage is "not reported" (acp-subagents §4, §12).
func (s *IdleState) UnmarshalJSON(b []byte) error { return idleDecoder.decode(b, s) }

var idleDecoder = newObjectDecoder[IdleState](lenientString[StopReason]("stopReason"),
	optionalMember[Error]("error"), optionalMember[Usage]("usage"))

// UnmarshalStateUpdate decodes a work state by its `state` tag; an unknown
// tag gives *OtherState.
func UnmarshalStateUpdate(b []byte) (StateUpdate, error) { return stateUpdates.decode(b) }

var stateUpdates = taggedUnion[StateUpdate]{name: "state update", key: "state",
	variants: map[string]func() StateUpdate{
		StateRunning:        func() StateUpdate { return new(RunningState) },
		StateRequiresAction: func() StateUpdate { return new(RequiresActionState) },
		StateIdle:           func() StateUpdate { return new(IdleState) },
		StateUnknown:        func() StateUpdate { return new(UnknownState) },
	},
	unknown: func(tag string, raw json.RawMessage) StateUpdate { return &OtherState{State: tag, Raw: raw} }}
