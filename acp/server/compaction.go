// This file shows compactions (rfd:session-compaction, stable since
// schema 1.25) to a client that advertised session.compaction, and keeps
// them out of every other client's traffic and replay.

package server

import (
	"bytes"
	"encoding/json"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
)

// compaction sends a compaction event. The start is live only: a replay
// shows the materialized compaction, its terminal update, which is
// recorded whether or not this client sees it, so that a later load by a
// client that advertised session.compaction shows where the history was
// summarised.
func (t *translator) compaction(ev agent.Event) {
	live := t.c.clientCaps().Session.Compaction != nil
	switch e := ev.(type) {
	case agent.CompactionStarted:
		if live {
			t.c.send(nil, t.session, &acp.CompactionUpdate{CompactionID: acp.CompactionID(e.ID), Status: acp.CompactionInProgress})
		}
	case agent.CompactionEnded:
		u := &acp.CompactionUpdate{CompactionID: acp.CompactionID(e.ID)}
		switch {
		case e.Cancelled:
			u.Status = acp.CompactionCancelled
		case e.Failure != "":
			u.Status = acp.CompactionFailed
			u.Error = acp.Set(e.Failure)
		default:
			u.Status = acp.CompactionCompleted
			u.Summary = acp.Set([]acp.ContentBlock{acp.TextBlock(e.Summary)})
		}
		switch {
		case live:
			t.c.send(t.journal, t.session, u)
		case t.journal != nil:
			t.record(u)
		}
	}
}

// notReplayed reports whether a recorded session/update params object
// stays out of a replay to this client: a compaction for a client that did
// not advertise session.compaction, and every config_option_update, since
// the load's answer carries the current options in this client's form (a
// recorded one may hold a boolean option that a client without
// session.configOptions.boolean must never see). The scan is cheap for
// the common case.
func notReplayed(params json.RawMessage, compaction bool) bool {
	if !bytes.Contains(params, []byte(`"compaction_`)) && !bytes.Contains(params, []byte(`"config_option_update"`)) {
		return false
	}
	var head struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &head) != nil {
		return false
	}
	switch head.Update.Kind {
	case acp.UpdateCompactionUpdate, acp.UpdateCompactionSummaryChunk:
		return !compaction
	case acp.UpdateConfigOptionUpdate:
		return true
	}
	return false
}
