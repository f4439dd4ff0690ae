// This file holds the settings every in-process provider (spawn, fork)
// takes, so the two providers and the run they share declare them once.

package subagents

import (
	"log/slog"
	"time"
)

// InProcessOptions configure a provider whose children run in this
// process. The zero value is usable.
type InProcessOptions struct {
	// MaxTurnRequests caps a child's model calls per task (the agent's
	// default when zero).
	MaxTurnRequests int
	// ProgressInterval is the least time between two progress reports in
	// the parent's tool call when the editor does not see the child
	// (default one second).
	ProgressInterval time.Duration
	Logger           *slog.Logger
}
