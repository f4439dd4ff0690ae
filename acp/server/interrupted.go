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
		n, ok := decodeRecorded(raw)
		if !ok || n.Update.ID == "" {
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
		updates = appendRecorded(s, updates, &acp.SessionNotification{SessionID: k.session, Update: &acp.ToolCallUpdate{
			ToolCallID: k.call,
			Status:     acp.ToolCallStatusFailed,
			Content:    []acp.ToolCallContent{acp.ToolText(interruptedText)},
		}})
	}
	for _, ch := range children {
		// A child still at work when the daemon stopped (a background
		// one outlives its turn) went idle with it.
		updates = appendRecorded(s, updates, &acp.SessionNotification{SessionID: ch.parent, Update: &acp.SubagentUpdate{
			SessionID: ch.id,
			State:     acp.Set[acp.StateUpdate](&acp.IdleState{StopReason: acp.StopReasonError, Error: &acp.Error{Code: acp.ErrInternal.Code, Message: interruptedChild}}),
		}})
	}
	return updates
}

// appendRecorded records n in s's journal and returns updates with it.
// A record that cannot be saved is logged by the journal; the replay
// still shows the end.
func appendRecorded(s *session.Session, updates []json.RawMessage, n *acp.SessionNotification) []json.RawMessage {
	raw, err := acp.MarshalSessionNotification(n)
	if err != nil {
		return updates
	}
	_ = s.RecordUpdate(raw)
	return append(updates, raw)
}

// recorded is what endInterrupted reads of a recorded session/update: a
// tool call's id and status, or a subagent_update's child and work state.
type recorded struct {
	SessionID acp.SessionID `json:"sessionId"`
	Update    struct {
		Kind    string             `json:"sessionUpdate"`
		ID      acp.ToolCallID     `json:"toolCallId"`
		Status  acp.ToolCallStatus `json:"status"`
		ChildID acp.SessionID      `json:"sessionId"`
		State   *struct {
			State string `json:"state"`
		} `json:"state"`
	} `json:"update"`
}

// decodeRecorded decodes raw as a recorded update; false when it is not one.
func decodeRecorded(raw json.RawMessage) (recorded, bool) {
	var n recorded
	return n, json.Unmarshal(raw, &n) == nil
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
		n, ok := decodeRecorded(raw)
		if !ok || n.Update.Kind != acp.UpdateSubagentUpdate || n.Update.State == nil {
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
