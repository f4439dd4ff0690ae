// This file starts a prepared command on pipes, as a subproc.Child: for
// long-lived children that talk on their stdio (an acp child agent).

package sandbox

import (
	"log/slog"

	"github.com/dshd/dshd/tools/subproc"
)

// StartChild starts the command like [subproc.Start]: its standard
// streams are pipes, it runs in a process group of its own, reaped by the
// child's goroutine, and dies with dshd. Stdin, Stdout and Stderr must not
// be set. The caller ends it through the returned child (StopGraces) and
// then calls [Cmd.Wait], which returns at once, to learn how the command
// ended and to remove its temp dir. log receives the child's teardown
// records.
func (c *Cmd) StartChild(log *slog.Logger) (*subproc.Child, error) {
	o := c.opts
	o.Logger = log
	child, err := subproc.Start(c.Cmd, &o)
	if c.statusW != nil {
		c.statusW.Close()
	}
	if err != nil {
		c.closeStatus()
		c.removeTemp()
		return nil, err
	}
	c.wait = func() error {
		<-child.Exited()
		return child.Err()
	}
	return child, nil
}
