// This file keeps a session's commands in step with their files.

package commands

import (
	"slices"
	"sync"
)

// Catalog is the commands of one session: the built-ins and the files of
// its sources, read again when a file is added, changed or deleted. It is
// safe for concurrent use.
type Catalog struct {
	sources []Source

	mu   sync.Mutex
	seen look      // guarded by mu; taken before cmds was read
	cmds []Command // guarded by mu
	errs []*Error  // guarded by mu
}

// NewCatalog returns the catalog of sources, read at once.
func NewCatalog(sources []Source) *Catalog {
	c := &Catalog{sources: slices.Clone(sources)}
	c.Refresh()
	return c
}

// Refresh looks at the files again and reads them when any may have been
// added, changed or deleted; it reports whether the commands changed.
// When the last look is trusted, looking is a stat of each directory that
// exists (of its nearest existing parent for one that does not) and of
// each command file, and nothing is opened. Otherwise the directories
// are listed, and the files read only when a stamp moved or the last
// ones were too new to trust.
func (c *Catalog) Refresh() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmds != nil && c.seen.unchanged() {
		return false
	}
	seen := lookAt(c.sources) // before reading: a change after it shows next time
	if c.cmds != nil && c.seen.sameFiles(seen) {
		c.seen = seen // a directory's new time, of an entry that is no command file
		return false
	}
	cmds, errs := Load(c.sources)
	changed := c.cmds != nil && !slices.EqualFunc(cmds, c.cmds, sameCommand)
	c.seen, c.cmds, c.errs = seen, cmds, errs
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
