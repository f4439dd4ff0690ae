// This file implements the spawn provider on the shared in-process
// machinery.

package spawn

import (
	"log/slog"
	"time"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/inproc"
)

// Name is the provider's name.
const Name = "spawn"

// Options configure the provider. The zero value (or nil) is usable.
type Options struct {
	// SystemTemplate replaces the embedded subagent template ({{var}}
	// syntax; cwd, model, date, os and permissions are available) for
	// children whose request has no system prompt of its own.
	SystemTemplate string
	// SkipProjectInstructions leaves the project's AGENTS.md out of the
	// child's system prompt.
	SkipProjectInstructions bool
	// MaxTurnRequests caps a child's model calls per task (the agent's
	// default when zero).
	MaxTurnRequests int
	// ProgressInterval is the least time between two progress reports in
	// the parent's tool call when the editor does not see the child
	// (default one second).
	ProgressInterval time.Duration
	Logger           *slog.Logger
}

// New returns the spawn provider.
func New(opts *Options) subagents.Provider {
	var o Options
	if opts != nil {
		o = *opts
	}
	sys := newSystem(o.SystemTemplate, o.SkipProjectInstructions, time.Now)
	return inproc.New(inproc.Config{
		Name:             Name,
		Begin:            sys.begin,
		MaxTurnRequests:  o.MaxTurnRequests,
		ProgressInterval: o.ProgressInterval,
		Logger:           o.Logger,
	})
}
