// This file puts the child's permission questions, and the fs writes and
// terminals it asks the parent for, through the parent's permission gate.

package acpprovider

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// metaRefused marks a rejection no person gave (the binding denies every
// request) on the answer to session/request_permission.
const metaRefused = "dshd.dev/refused"

// Tool names the parent's gate remembers "always" answers under: every
// acp child's edits, and every acp child's other actions.
const (
	gateEdit    = "acp:edit"
	gateExecute = "acp:execute"
)

// permission answers the agent's session/request_permission with the
// parent's decision: the gate applies the parent's mode and remembered
// answers and, when it must ask, reaches the editor (on the child's own
// session when the editor sees it). The decision goes back as the option
// of the matching kind among those the agent offered.
func (c *child) permission(ctx context.Context, rt *route, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	tc := req.ToolCall
	kind := tools.Kind(tc.Kind)
	if kind == "" {
		kind = tools.KindOther
	}
	preq := tools.PermissionRequest{
		ToolCallID: string(tc.ToolCallID),
		ToolName:   gateExecute,
		Title:      tc.Title,
		Kind:       kind,
		Effect:     effectOf(kind),
		Content:    toolContent(tc.Content),
		Locations:  toolLocations(tc.Locations),
		Requester:  c.requester,
	}
	if preq.Effect == tools.EffectEdit {
		preq.ToolName = gateEdit
	}
	if preq.Title == "" {
		preq.Title = "An action of " + c.name
	}
	if len(tc.RawInput) > 0 {
		var in any
		if json.Unmarshal(tc.RawInput, &in) == nil {
			preq.RawInput = in
		}
	}
	if rt.up != "" {
		// The editor sees this session and the tool call on it.
		preq.Requester = rt.up
	}
	d, err := c.decide(ctx, preq)
	if err != nil {
		c.log.Warn("the permission question could not be asked", "err", err)
		d = tools.Cancelled
	}
	var outcome acp.RequestPermissionOutcome = &acp.CancelledPermissionOutcome{}
	switch d {
	case tools.Allowed:
		if id, ok := pickOption(req.Options, acp.PermissionAllowOnce, acp.PermissionAllowAlways); ok {
			outcome = acp.Selected(id)
			c.grants.add(preq.Effect, preq.Locations, c.env)
		}
	case tools.Rejected, tools.Refused:
		if id, ok := pickOption(req.Options, acp.PermissionRejectOnce, acp.PermissionRejectAlways); ok {
			outcome = acp.Selected(id)
		}
	}
	resp := &acp.RequestPermissionResponse{Outcome: outcome}
	if d == tools.Refused {
		// Nobody was asked: a dshd agent tells its model so.
		resp.Meta = acp.Meta{metaRefused: true}
	}
	return resp, nil
}

// decide runs req through the parent's gate (tools/permission decides); a
// parent without one allows (it has no policy to apply), a binding pinned
// to deny rejects.
func (c *child) decide(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	if c.deny {
		return permission.DenyAll.Check(ctx, req)
	}
	var gate tools.Permission
	if c.env != nil {
		gate = c.env.Permission
	}
	return permission.Decide(ctx, gate, req)
}

// effectOf is what the gate weighs: edits as edits, anything else the
// child asks about as an action (a read it asks about is not confined by
// the parent, so it is not waved through as one of the parent's reads).
func effectOf(k tools.Kind) tools.Effect {
	switch k {
	case tools.KindEdit, tools.KindDelete, tools.KindMove:
		return tools.EffectEdit
	}
	return tools.EffectExecute
}

// pickOption returns the first offered option of the preferred kind, else
// of the fallback kind.
func pickOption(opts []acp.PermissionOption, kinds ...acp.PermissionOptionKind) (string, bool) {
	for _, k := range kinds {
		for _, o := range opts {
			if o.Kind == k {
				return o.OptionID, true
			}
		}
	}
	return "", false
}

// toolContent converts what the editor is shown with the question.
func toolContent(in []acp.ToolCallContent) []tools.Content {
	var out []tools.Content
	for _, it := range in {
		switch it := it.(type) {
		case *acp.ToolContent:
			if t, ok := it.Content.(*acp.TextContent); ok {
				out = append(out, tools.TextContent(t.Text))
			}
		case *acp.Diff:
			out = append(out, tools.Content{Type: tools.ContentDiff, Path: it.Path, OldText: it.OldText, NewText: it.NewText})
		}
	}
	return out
}

func toolLocations(in []acp.ToolCallLocation) []tools.Location {
	var out []tools.Location
	for _, l := range in {
		loc := tools.Location{Path: l.Path}
		if l.Line != nil {
			loc.Line = int(*l.Line)
		}
		out = append(out, loc)
	}
	return out
}

// gateAction asks the parent's gate about an fs write or a terminal the
// child requested without a permission question of its own. It is shown
// as a tool call of the parent (the editor has never seen a tool call of
// the child's for it).
func (c *child) gateAction(ctx context.Context, req tools.PermissionRequest) error {
	req.Requester = c.requester
	d, err := c.decide(ctx, req)
	if err != nil {
		return acp.ErrInternal.WithData(map[string]any{"reason": "the permission question could not be asked"})
	}
	switch d {
	case tools.Allowed:
		return nil
	case tools.Cancelled:
		return acp.ErrRequestCancelled
	}
	return acp.ErrInternal.WithData(map[string]any{"reason": "rejected: the user or the parent's permission settings do not allow this (" + req.Title + ")"})
}

// grants remember what a permission question of the child's allowed, so
// the fs write or terminal that carries the action out is not put to the
// user a second time. A grant with locations covers writes to those
// files; one without covers one write (or one terminal). Grants last until
// the end of the run.
type grants struct {
	mu    sync.Mutex
	paths map[string]bool
	edits int
	execs int
}

func (g *grants) add(effect tools.Effect, locs []tools.Location, env *tools.Env) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if effect != tools.EffectEdit {
		g.execs++
		return
	}
	if len(locs) == 0 {
		g.edits++
		return
	}
	if g.paths == nil {
		g.paths = map[string]bool{}
	}
	for _, l := range locs {
		g.paths[resolveLoose(env, l.Path)] = true
	}
}

// takeEdit consumes a grant covering a write to path (already resolved).
func (g *grants) takeEdit(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paths[path] {
		delete(g.paths, path)
		return true
	}
	if g.edits > 0 {
		g.edits--
		return true
	}
	return false
}

func (g *grants) takeExec() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.execs > 0 {
		g.execs--
		return true
	}
	return false
}

func (g *grants) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paths, g.edits, g.execs = nil, 0, 0
}

// resolveLoose resolves p in the workspace when it can, else cleans it.
func resolveLoose(env *tools.Env, p string) string {
	if env != nil && env.Workspace != nil {
		if r, err := env.Workspace.Resolve(p); err == nil {
			return r
		}
	}
	return filepath.Clean(p)
}
