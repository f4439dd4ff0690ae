// This file keeps a session's commands in step with their files.

package commands

import (
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/mdfiles"
)

// Catalog is the commands of one session: the built-ins and the files of
// its sources, read again when a file is added, changed or deleted. It is
// safe for concurrent use.
type Catalog struct {
	sources []Source
	limits  Limits // filled

	mu     sync.Mutex
	stamps []mdfiles.Stamp // guarded by mu
	// over are the directories that held more files than were read;
	// guarded by mu. A file added past the count changes no stamp.
	over []mdfiles.TooManyError
	// settled: every stamp was Settle old when read, so an unchanged
	// stamp means an unchanged file; otherwise the files are read again
	// (a same-size rewrite within one clock tick keeps its stamp).
	settled bool      // guarded by mu
	cmds    []Command // guarded by mu
	errs    []*Error  // guarded by mu
}

// NewCatalog returns the catalog of sources, read at once and whenever
// they change within limits.
func NewCatalog(sources []Source, limits Limits) *Catalog {
	c := &Catalog{sources: slices.Clone(sources), limits: limits.filled()}
	c.Refresh()
	return c
}

// Refresh looks at the files again (a stat of each) and reads them when
// any was added, changed or deleted; it reports whether the commands
// changed.
func (c *Catalog) Refresh() bool {
	now := time.Now() // before the stats: a change during them is too new to trust
	found := list(c.sources, c.limits)
	stamps := found.stamps()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmds != nil && c.settled && slices.Equal(stamps, c.stamps) && slices.Equal(found.over, c.over) {
		return false
	}
	cmds, errs := found.load(c.limits.bound())
	changed := c.cmds != nil && !slices.EqualFunc(cmds, c.cmds, sameCommand)
	c.stamps, c.over, c.cmds, c.errs = stamps, found.over, cmds, errs
	c.settled = !slices.ContainsFunc(stamps, func(st mdfiles.Stamp) bool { return !st.Settled(now) })
	return changed
}

func sameCommand(a, b Command) bool {
	return a.Name == b.Name && a.Description == b.Description && a.ArgumentHint == b.ArgumentHint &&
		a.Body == b.Body && a.Model == b.Model && slices.Equal(a.AllowedTools, b.AllowedTools) && a.File == b.File
}

// Commands returns the commands: the built-ins first.
func (c *Catalog) Commands() []Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.cmds)
}

// Errors returns the mistakes in the command files as last read.
func (c *Catalog) Errors() []*Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

// ToolErrors returns a mistake for each tool a command's allowed-tools
// names that is not among known (a session's tools), as the commands were
// last read.
func (c *Catalog) ToolErrors(known []string) []*Error {
	var out []*Error
	for _, cmd := range c.Commands() {
		out = append(out, cmd.unknownTools(known)...)
	}
	return out
}

// Lookup returns the command called name.
func (c *Catalog) Lookup(name string) (Command, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range c.cmds {
		if cmd.Name == name {
			return cmd, true
		}
	}
	return Command{}, false
}

// Rejected returns the mistake of the command file that would be the
// command called name, when that file was refused and no command of the
// name loaded: /name is then the user's command that could not be used,
// not text for the model.
func (c *Catalog) Rejected(name string) (*Error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		if filepath.Base(e.File) == name+".md" {
			return e, true
		}
	}
	return nil, false
}
