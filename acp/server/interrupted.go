// This file ends, in a reopened session's record, the tool calls the
// daemon never finished because it stopped (a crash, a kill).

package server

import (
	"bytes"
	"encoding/json"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
)

// interruptedText is what an interrupted call ends with; the model-side
// history says the same (session.Load repairs it).
const interruptedText = "The daemon stopped before this call finished."

// endInterrupted returns updates followed by a failed tool_call_update
// for every tool call they leave pending or in progress, on whichever
// session of the journal it belongs to (an exposed child's too). A session
// that is being reopened runs nothing, so such a call can never finish:
// the failure is recorded, so every later load replays it once.
func (c *Conn) endInterrupted(s *session.Session, updates []json.RawMessage) []json.RawMessage {
	type key struct {
		session acp.SessionID
		call    acp.ToolCallID
	}
	var open []key
	state := map[key]acp.ToolCallStatus{}
	children := childWork(updates)
	for _, raw := range updates {
		if !bytes.Contains(raw, []byte(`"tool_call`)) {
			continue
		}
		var n struct {
			SessionID acp.SessionID `json:"sessionId"`
			Update    struct {
				Kind   string             `json:"sessionUpdate"`
				ID     acp.ToolCallID     `json:"toolCallId"`
				Status acp.ToolCallStatus `json:"status"`
			} `json:"update"`
		}
		if json.Unmarshal(raw, &n) != nil || n.Update.ID == "" {
			continue
		}
		k := key{n.SessionID, n.Update.ID}
		switch n.Update.Kind {
		case acp.UpdateToolCall:
			if _, seen := state[k]; !seen {
				open = append(open, k)
			}
			state[k] = n.Update.Status
		case acp.UpdateToolCallUpdate:
			// Only a call the journal announced is ended.
			if _, seen := state[k]; seen && n.Update.Status != "" {
				state[k] = n.Update.Status
			}
		}
	}
	for _, k := range open {
		if st := state[k]; st == acp.ToolCallStatusCompleted || st == acp.ToolCallStatusFailed {
			continue
		}
		raw, err := acp.MarshalSessionNotification(&acp.SessionNotification{SessionID: k.session, Update: &acp.ToolCallUpdate{
			ToolCallID: k.call,
			Status:     acp.ToolCallStatusFailed,
			Content:    []acp.ToolCallContent{acp.ToolText(interruptedText)},
		}})
		if err != nil {
			continue
		}
		// A record that cannot be saved is logged by the journal; the
		// replay still shows the call ended.
		_ = s.RecordUpdate(raw)
		updates = append(updates, raw)
	}
	for _, ch := range children {
		// A child still at work when the daemon stopped (a background
		// one outlives its turn) went idle with it.
		raw, err := acp.MarshalSessionNotification(&acp.SessionNotification{SessionID: ch.parent, Update: &acp.SubagentUpdate{
			SessionID: ch.id,
			State:     acp.Set[acp.StateUpdate](&acp.IdleState{StopReason: acp.StopReasonError, Error: &acp.Error{Code: acp.ErrInternal.Code, Message: interruptedChild}}),
		}})
		if err != nil {
			continue
		}
		_ = s.RecordUpdate(raw)
		updates = append(updates, raw)
	}
	return updates
}

// interruptedChild is why a child left running ends on a reopen.
const interruptedChild = "The daemon stopped while the subagent ran."

// busyChild is a child whose recorded work state is not idle.
type busyChild struct{ id, parent acp.SessionID }

// childWork returns the children whose last recorded work state is
// running or requires_action, in the order they were announced.
func childWork(updates []json.RawMessage) []busyChild {
	var order []busyChild
	busy, listed := map[acp.SessionID]bool{}, map[acp.SessionID]bool{}
	for _, raw := range updates {
		if !bytes.Contains(raw, []byte(acp.UpdateSubagentUpdate)) || !bytes.Contains(raw, []byte(`"state"`)) {
			continue
		}
		var n struct {
			SessionID acp.SessionID `json:"sessionId"`
			Update    struct {
				Kind    string        `json:"sessionUpdate"`
				ChildID acp.SessionID `json:"sessionId"`
				State   *struct {
					State string `json:"state"`
				} `json:"state"`
			} `json:"update"`
		}
		if json.Unmarshal(raw, &n) != nil || n.Update.Kind != acp.UpdateSubagentUpdate || n.Update.State == nil {
			continue
		}
		now := n.Update.State.State == "running" || n.Update.State.State == "requires_action"
		if now && !listed[n.Update.ChildID] {
			listed[n.Update.ChildID] = true
			order = append(order, busyChild{id: n.Update.ChildID, parent: n.SessionID})
		}
		busy[n.Update.ChildID] = now
	}
	out := order[:0]
	for _, c := range order {
		if busy[c.id] {
			out = append(out, c)
		}
	}
	return out
}
