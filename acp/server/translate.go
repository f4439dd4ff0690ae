// This file turns agent events into ACP session updates.

package server

import (
	"encoding/json"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools"
)

// translator sends one agent's events as updates of one session.
type translator struct {
	c       *Conn
	journal *session.Session
	session acp.SessionID
	// optedIn lets `session` content items through.
	optedIn bool
}

func (t *translator) emit(ev agent.Event) {
	switch ev.(type) {
	case agent.CompactionStarted, agent.CompactionEnded:
		t.compaction(ev)
		return
	}
	u := t.update(ev)
	if u == nil {
		return
	}
	if e, ok := ev.(agent.ToolCallUpdated); ok && t.journal != nil && hasTerminal(e.Content) {
		// An editor terminal lives only as long as this connection: the
		// record keeps the command's output instead, the client gets the
		// terminal.
		t.record(t.recorded(e, u.(*acp.ToolCallUpdate)))
		t.c.send(nil, t.session, u)
		return
	}
	t.c.send(t.journal, t.session, u)
}

// record journals u as an update of the session. A record that cannot
// be saved stops the turn, as in send.
func (t *translator) record(u acp.SessionUpdate) {
	if b := t.c.encode(t.session, u); b != nil {
		_ = t.journal.RecordUpdate(b)
	}
}

func hasTerminal(cs []tools.Content) bool {
	for _, c := range cs {
		if c.Type == tools.ContentTerminal {
			return true
		}
	}
	return false
}

// recorded is the journal's copy of a tool call update that shows a
// terminal: each terminal item becomes the command's output as text, or
// is left out while the command runs (its output is not known yet). An
// update left with no content keeps the content it had (nil, not empty).
func (t *translator) recorded(e agent.ToolCallUpdated, live *acp.ToolCallUpdate) *acp.ToolCallUpdate {
	u := *live
	u.Content = nil
	for _, c := range e.Content {
		switch {
		case c.Type != tools.ContentTerminal:
			u.Content = append(u.Content, t.content([]tools.Content{c})...)
		case c.Text != "":
			u.Content = append(u.Content, acp.ToolText(c.Text))
		}
	}
	return &u
}

// update maps one event; nil means nothing to send.
func (t *translator) update(ev agent.Event) acp.SessionUpdate {
	switch e := ev.(type) {
	case agent.MessageChunk:
		return &acp.AgentMessageChunk{Content: acp.TextBlock(e.Text), MessageID: acp.MessageID(e.MessageID)}
	case agent.ThoughtChunk:
		return &acp.AgentThoughtChunk{Content: acp.TextBlock(e.Text), MessageID: acp.MessageID(e.MessageID)}
	case agent.UserChunk:
		return &acp.UserMessageChunk{Content: acp.TextBlock(e.Text), MessageID: acp.MessageID(e.MessageID)}
	case agent.ToolCallStarted:
		return &acp.ToolCall{
			ToolCallID: acp.ToolCallID(e.ID),
			Title:      e.Title,
			Name:       e.Name,
			Kind:       acp.ToolKind(e.Kind),
			Status:     acp.ToolCallStatusPending,
			RawInput:   e.RawInput,
			Locations:  locations(e.Locations),
		}
	case agent.ToolCallUpdated:
		if e.Status == agent.ToolCompleted || e.Status == agent.ToolFailed {
			t.c.srv.observer().ToolCallEnded(string(e.Status))
		}
		u := &acp.ToolCallUpdate{
			ToolCallID: acp.ToolCallID(e.ID),
			Title:      e.Title,
			Name:       e.Name,
			Status:     acp.ToolCallStatus(e.Status),
			Content:    t.content(e.Content),
			Locations:  locations(e.Locations),
		}
		if e.RawOutput != nil {
			if b, err := json.Marshal(e.RawOutput); err == nil {
				u.RawOutput = b
			}
		}
		return u
	case agent.PlanUpdated:
		p := &acp.Plan{Entries: []acp.PlanEntry{}}
		for _, en := range e.Entries {
			p.Entries = append(p.Entries, acp.PlanEntry{Content: en.Content, Priority: acp.PlanEntryPriority(en.Priority), Status: acp.PlanEntryStatus(en.Status)})
		}
		return p
	case agent.UsageUpdated:
		if e.Size <= 0 {
			return nil
		}
		used := e.Used
		if used < 0 {
			used = 0
		}
		return &acp.UsageUpdate{Used: uint64(used), Size: uint64(e.Size), Meta: acp.Meta{metaUsage: WireUsage(e.Call), metaTurnUsage: WireUsage(e.Turn)}}
	}
	return nil
}

// content maps tool content; a nil input stays nil (unchanged), an empty
// one is an explicit empty list.
func (t *translator) content(in []tools.Content) []acp.ToolCallContent {
	if in == nil {
		return nil
	}
	out := make([]acp.ToolCallContent, 0, len(in))
	for _, c := range in {
		switch c.Type {
		case tools.ContentText:
			out = append(out, acp.ToolText(c.Text))
		case tools.ContentDiff:
			out = append(out, &acp.Diff{Path: c.Path, OldText: c.OldText, NewText: c.NewText})
		case tools.ContentTerminal:
			out = append(out, &acp.Terminal{TerminalID: acp.TerminalID(c.TerminalID)})
		case tools.ContentSession:
			if t.optedIn {
				out = append(out, &acp.SessionReference{SessionID: acp.SessionID(c.SessionID)})
			}
		}
	}
	return out
}

func locations(in []tools.Location) []acp.ToolCallLocation {
	if in == nil {
		return nil
	}
	out := make([]acp.ToolCallLocation, 0, len(in))
	for _, l := range in {
		loc := acp.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			line := uint32(l.Line)
			loc.Line = &line
		}
		out = append(out, loc)
	}
	return out
}

// marshalNotification encodes n as the connection writes it (once, with
// the text-chunk fast path: a large prompt is not copied at every level).
func marshalNotification(n *acp.SessionNotification) (json.RawMessage, error) {
	return acp.MarshalSessionNotification(n)
}

// stripSubagentTraffic filters a recorded parent update for a client that
// did not opt in: subagent updates and messages are dropped, `session`
// content items removed. It returns nil to drop the update.
func stripSubagentTraffic(raw, update json.RawMessage) json.RawMessage {
	var head struct {
		Kind string `json:"sessionUpdate"`
	}
	if json.Unmarshal(update, &head) != nil {
		return nil
	}
	switch head.Kind {
	case acp.UpdateSubagentUpdate, acp.UpdateSessionMessage, acp.UpdateSessionMessageChunk:
		return nil
	case acp.UpdateToolCall, acp.UpdateToolCallUpdate:
		var n acp.SessionNotification
		if json.Unmarshal(raw, &n) != nil {
			return raw
		}
		var content *[]acp.ToolCallContent
		switch u := n.Update.(type) {
		case *acp.ToolCall:
			content = &u.Content
		case *acp.ToolCallUpdate:
			content = &u.Content
		}
		if content == nil || *content == nil {
			return raw
		}
		kept := (*content)[:0:0]
		changed := false
		for _, item := range *content {
			if _, isSession := item.(*acp.SessionReference); isSession {
				changed = true
				continue
			}
			kept = append(kept, item)
		}
		if !changed {
			return raw
		}
		*content = kept
		b, err := json.Marshal(&n)
		if err != nil {
			return nil
		}
		return b
	}
	return raw
}

// metaUsage is the _meta key of a usage_update that carries the token
// usage of the model call it follows, so a parent dshd can count an acp
// child's tokens (used says only what the context holds).
const metaUsage = "dshd.dev/usage"

// metaTurnUsage is the _meta key of a usage_update that carries the
// running turn's usage so far, its subagents' included wherever they ran:
// the session's totals for the editor, and what a parent dshd charges an
// acp child's budget as it goes.
const metaTurnUsage = "dshd.dev/turnUsage"
