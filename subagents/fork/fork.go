// This file implements the fork provider on the shared in-process machinery.

package fork

import (
	"log/slog"
	"time"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/inproc"
)

// Name is the provider's name.
const Name = "fork"

// Options configure the provider. The zero value (or nil) is usable.
type Options struct {
	// MaxTurnRequests caps a child's model calls per task (the agent's
	// default when zero).
	MaxTurnRequests int
	// ProgressInterval is the least time between two progress reports in
	// the parent's tool call when the editor does not see the child
	// (default one second).
	ProgressInterval time.Duration
	Logger           *slog.Logger
}

// New returns the fork provider.
func New(opts *Options) subagents.Provider {
	var o Options
	if opts != nil {
		o = *opts
	}
	return inproc.New(inproc.Config{
		Name:             Name,
		Inherit:          true,
		MaxTurnRequests:  o.MaxTurnRequests,
		ProgressInterval: o.ProgressInterval,
		Logger:           o.Logger,
	})
}
