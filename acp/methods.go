// methods.go: method names and enumerated values, written once (acp-v1 §5).

package acp

// Agent methods: client → agent (acp-v1 §5).
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionClose           = "session/close"
	MethodSessionList            = "session/list"
	MethodSessionDelete          = "session/delete"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel" // notification
	// MethodSessionFork is unstable (rfd:session-fork, acp-v1 §25): only
	// in the SDK's schema.unstable.json.
	MethodSessionFork = "session/fork"
)

// Client methods: agent → client (acp-v1 §5).
const (
	MethodSessionUpdate            = "session/update" // notification
	MethodSessionRequestPermission = "session/request_permission"
	MethodFsReadTextFile           = "fs/read_text_file"
	MethodFsWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
	MethodElicitationCreate        = "elicitation/create"
	MethodElicitationComplete      = "elicitation/complete" // notification
)

// MethodCancelRequest is the protocol-level cancel notification, valid in
// both directions (acp-v1 §20).
const MethodCancelRequest = "$/cancel_request"

// ProtocolVersion is the ACP major version number (acp-v1 §6.3). It is an int
// so that a missing value can be told from 0 while decoding; valid values are
// 0..65535.
type ProtocolVersion int

// ProtocolVersion1 is the only version this package speaks.
const ProtocolVersion1 ProtocolVersion = 1

// StopReason ends a prompt turn (acp-v1 §9.3). The subagent idle state adds
// [StopReasonError] (acp-subagents §4).
type StopReason string

// Stop reasons.
const (
	StopReasonEndTurn         StopReason = "end_turn"
	StopReasonMaxTokens       StopReason = "max_tokens"
	StopReasonMaxTurnRequests StopReason = "max_turn_requests"
	StopReasonRefusal         StopReason = "refusal"
	StopReasonCancelled       StopReason = "cancelled"
	// StopReasonError is valid only in an idle subagent state, never in a
	// session/prompt response.
	StopReasonError StopReason = "error"
)

// ToolKind is a tool call's icon/UX hint (acp-v1 §12.3).
type ToolKind string

// Tool kinds.
const (
	ToolKindRead       ToolKind = "read"
	ToolKindEdit       ToolKind = "edit"
	ToolKindDelete     ToolKind = "delete"
	ToolKindMove       ToolKind = "move"
	ToolKindSearch     ToolKind = "search"
	ToolKindExecute    ToolKind = "execute"
	ToolKindThink      ToolKind = "think"
	ToolKindFetch      ToolKind = "fetch"
	ToolKindSwitchMode ToolKind = "switch_mode"
	ToolKindOther      ToolKind = "other"
)

// ToolCallStatus is a tool call's progress (acp-v1 §12.3). There is no
// cancelled status.
type ToolCallStatus string

// Tool call statuses.
const (
	ToolCallStatusPending    ToolCallStatus = "pending"
	ToolCallStatusInProgress ToolCallStatus = "in_progress"
	ToolCallStatusCompleted  ToolCallStatus = "completed"
	ToolCallStatusFailed     ToolCallStatus = "failed"
)

// PermissionOptionKind hints how a permission option is shown (acp-v1 §12.5).
type PermissionOptionKind string

// Permission option kinds.
const (
	PermissionAllowOnce    PermissionOptionKind = "allow_once"
	PermissionAllowAlways  PermissionOptionKind = "allow_always"
	PermissionRejectOnce   PermissionOptionKind = "reject_once"
	PermissionRejectAlways PermissionOptionKind = "reject_always"
)

// PlanEntryPriority is a plan entry's priority (acp-v1 §13).
type PlanEntryPriority string

// Plan entry priorities.
const (
	PlanPriorityHigh   PlanEntryPriority = "high"
	PlanPriorityMedium PlanEntryPriority = "medium"
	PlanPriorityLow    PlanEntryPriority = "low"
)

// PlanEntryStatus is a plan entry's status (acp-v1 §13).
type PlanEntryStatus string

// Plan entry statuses.
const (
	PlanStatusPending    PlanEntryStatus = "pending"
	PlanStatusInProgress PlanEntryStatus = "in_progress"
	PlanStatusCompleted  PlanEntryStatus = "completed"
)

// Role is an annotation audience (acp-v1 §11).
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Session update tags: the `sessionUpdate` discriminator (acp-v1 §10,
// §23.1, acp-subagents §3, §5).
const (
	UpdateUserMessageChunk        = "user_message_chunk"
	UpdateAgentMessageChunk       = "agent_message_chunk"
	UpdateAgentThoughtChunk       = "agent_thought_chunk"
	UpdateToolCall                = "tool_call"
	UpdateToolCallUpdate          = "tool_call_update"
	UpdatePlan                    = "plan"
	UpdateAvailableCommandsUpdate = "available_commands_update"
	UpdateCurrentModeUpdate       = "current_mode_update"
	UpdateConfigOptionUpdate      = "config_option_update"
	UpdateSessionInfoUpdate       = "session_info_update"
	UpdateUsageUpdate             = "usage_update"
	UpdateNotice                  = "notice"
	UpdateCompactionUpdate        = "compaction_update"
	UpdateCompactionSummaryChunk  = "compaction_summary_chunk"
	UpdateSubagentUpdate          = "subagent_update"
	UpdateSessionMessage          = "session_message"
	UpdateSessionMessageChunk     = "session_message_chunk"
)

// Content block tags: the `type` discriminator of [ContentBlock] (acp-v1 §11).
const (
	ContentTypeText         = "text"
	ContentTypeImage        = "image"
	ContentTypeAudio        = "audio"
	ContentTypeResourceLink = "resource_link"
	ContentTypeResource     = "resource"
)

// Tool call content tags: the `type` discriminator of [ToolCallContent]
// (acp-v1 §12.4, acp-subagents §6).
const (
	ToolContentTypeContent  = "content"
	ToolContentTypeDiff     = "diff"
	ToolContentTypeTerminal = "terminal"
	ToolContentTypeSession  = "session"
)

// Config option categories (acp-v1 §16.1); names starting with `_` are free
// for custom use.
const (
	ConfigCategoryMode         = "mode"
	ConfigCategoryModel        = "model"
	ConfigCategoryModelConfig  = "model_config"
	ConfigCategoryThoughtLevel = "thought_level"
)

// Elicitation modes and actions (acp-v1 §19).
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
	ElicitationAccept   = "accept"
	ElicitationDecline  = "decline"
	ElicitationCancel   = "cancel"
)

// Work states of a subagent (acp-subagents §4).
const (
	StateRunning        = "running"
	StateRequiresAction = "requires_action"
	StateIdle           = "idle"
	StateUnknown        = "unknown"
)
