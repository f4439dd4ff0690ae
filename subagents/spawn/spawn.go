// This file implements the spawn provider on the shared in-process
// machinery.

package spawn

import (
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
	subagents.InProcessOptions
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
		InProcessOptions: o.InProcessOptions,
	})
}
