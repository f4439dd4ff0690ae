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
	return updates
}
