// This file feeds a child's events to the bounded progress summary shown
// in the parent's tool call when the editor does not see the child.

package inproc

import (
	"time"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// progressSink is the shared sink fed with the agent's events.
type progressSink struct {
	sink *runkit.ProgressSink[agent.Event]
}

func newProgressSink(fn func(subagents.Progress), interval time.Duration) *progressSink {
	return &progressSink{sink: runkit.NewProgressSink(fn, interval, foldEvent)}
}

// observe folds ev into the summary and sends or schedules it.
func (s *progressSink) observe(ev agent.Event) { s.sink.Observe(ev) }

// finish sends the final summary; nothing is sent after it.
func (s *progressSink) finish() { s.sink.Finish() }

// foldEvent applies ev to the summary and reports whether it changed.
func foldEvent(m *runkit.Summary, ev agent.Event) bool {
	switch e := ev.(type) {
	case agent.MessageChunk:
		m.AppendText(e.MessageID, e.Text)
	case agent.ToolCallStarted:
		title := e.Title
		if title == "" {
			title = e.Name
		}
		m.StartTool(e.ID, title, string(agent.ToolPending))
	case agent.ToolCallUpdated:
		return m.UpdateTool(e.ID, e.Title, string(e.Status))
	case agent.UsageUpdated:
		m.AddUsage(e.Call)
	default:
		return false
	}
	return true
}
