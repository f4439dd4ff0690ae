// This file implements Restore: a child rebuilt from a snapshot, whose
// session lives on in its agent, continued on a new connection when it is
// resumed.

package acpprovider

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

var _ subagents.Restorer = (*Provider)(nil)

// Restore rebuilds the child of a snapshot without connecting: the run
// returned has ended, and resuming it starts (or dials) the agent again
// and continues the child's session there through session/resume, or
// session/load, whichever the agent offered when the snapshot was taken.
// An agent that offered neither makes the resume an error saying so.
func (p *Provider) Restore(ctx context.Context, req subagents.StartRequest, raw json.RawMessage) (subagents.Run, error) {
	var snap snapshot
	if err := json.Unmarshal(raw, &snap); err != nil || snap.Session == "" {
		return nil, runkit.Invalid("the snapshot is not this provider's")
	}
	parent := req.Parent
	if parent == nil {
		return nil, runkit.Invalid("a restore request needs a parent scope")
	}
	t, schema, err := p.resolveRequest(req)
	if err != nil {
		return nil, err
	}
	cwd := cmp.Or(snap.Cwd, parent.Cwd)
	c := p.newChild(req, t, schema, cwd)
	c.session = snap.Session
	init := &acp.InitializeResponse{}
	init.AgentCapabilities.LoadSession = snap.Load
	if snap.Resume {
		init.AgentCapabilities.SessionCapabilities.Resume = &acp.EmptyCapability{}
	}
	c.peer = p.gonePeer(t, init)
	c.ctx, c.stop = context.WithCancel(context.WithoutCancel(ctx))
	if c.expose != nil {
		up, err := c.announce(req.Description, snap.Up)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.up, c.requester = up, up
	}
	c.track(&route{c: c, down: snap.Session, up: c.up})
	r := c.newRun("", nil)
	c.runs.Begin(r)
	r.Finish(subagents.Result{StopReason: subagents.StopCompleted, ChildSessionID: c.up})
	return r, nil
}
