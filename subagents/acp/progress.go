// This file folds a child's session updates into the bounded progress
// summary shown in the parent's tool call when the editor does not see
// the child as a session of its own.

package acpprovider

import (
	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// progressSink is the shared sink fed with the child's session updates.
type progressSink = runkit.ProgressSink[acp.SessionUpdate]

// foldUpdate applies u to the summary and reports whether it changed.
func foldUpdate(m *runkit.Summary, u acp.SessionUpdate) bool {
	switch u := u.(type) {
	case *acp.AgentMessageChunk:
		t, ok := u.Content.(*acp.TextContent)
		if !ok || t.Text == "" {
			return false
		}
		m.AppendText(string(u.MessageID), t.Text)
		return true
	case *acp.ToolCall:
		m.StartTool(string(u.ToolCallID), u.Title, string(u.Status))
		return true
	case *acp.ToolCallUpdate:
		return m.UpdateTool(string(u.ToolCallID), u.Title, string(u.Status))
	}
	return false
}
