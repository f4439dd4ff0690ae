// This file defines the events an agent emits during a turn and the stop
// reasons a turn ends with.

package agent

import (
	"encoding/json"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
)

// Event is something that happened during a turn, in the order it
// happened. The concrete types are listed below; the set is sealed.
type Event interface{ isEvent() }

// MessageChunk is a piece of the answer.
type MessageChunk struct {
	MessageID string
	Text      string
}

// ThoughtChunk is a piece of the model's reasoning.
type ThoughtChunk struct {
	MessageID string
	Text      string
}

// UserChunk is the user's own message. The agent does not emit it during a
// live turn; sessions record it so that a replay can show it.
type UserChunk struct {
	MessageID string
	Text      string
}

// ToolStatus is the lifecycle state of a tool call.
type ToolStatus string

// Tool call states, as ACP names them.
const (
	ToolPending    ToolStatus = "pending"
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// ToolCallStarted announces a tool call, pending.
type ToolCallStarted struct {
	ID        string
	Name      string
	Title     string
	Kind      tools.Kind
	RawInput  json.RawMessage
	Locations []tools.Location
}

// ToolCallUpdated changes a tool call. Zero fields are unchanged; Content
// and Locations, when non-nil, replace the previous ones. Name is the
// tool's name, the same on every update of a call.
type ToolCallUpdated struct {
	ID        string
	Name      string
	Status    ToolStatus
	Title     string
	Content   []tools.Content
	Locations []tools.Location
	RawOutput any
}

// PlanUpdated carries the complete current plan.
type PlanUpdated struct {
	Entries []tools.PlanEntry
}

// UsageUpdated reports the context window state after a model call, and
// the turn's usage after a model call or once the subagents of a
// response's tool calls spent some.
type UsageUpdated struct {
	// Used is the number of tokens in the context now; Size the window.
	Used, Size int64
	// Call is the usage of the call that just ended; zero when the event
	// reports only what subagents spent.
	Call llm.Usage
	// Turn is the turn's usage so far: its model calls and everything its
	// subagents spent.
	Turn llm.Usage
}

// CompactionStarted announces that the conversation is being compacted:
// older turns are summarised before the next model call.
type CompactionStarted struct {
	// ID identifies the compaction; unique within the agent's lifetime
	// and, with its random base, across the agents of a session.
	ID string
}

// CompactionEnded ends the compaction ID: Summary is what replaced the
// older turns when it succeeded; Failure says why it failed; Cancelled
// means the turn was cancelled first. Exactly one follows each
// CompactionStarted.
type CompactionEnded struct {
	ID        string
	Summary   string
	Failure   string
	Cancelled bool
}

func (MessageChunk) isEvent()      {}
func (ThoughtChunk) isEvent()      {}
func (UserChunk) isEvent()         {}
func (ToolCallStarted) isEvent()   {}
func (ToolCallUpdated) isEvent()   {}
func (PlanUpdated) isEvent()       {}
func (UsageUpdated) isEvent()      {}
func (CompactionStarted) isEvent() {}
func (CompactionEnded) isEvent()   {}

// StopReason is why a turn ended (ACP's StopReason values).
type StopReason string

// Stop reasons.
const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)
