// This file serves the child's fs/read_text_file and fs/write_text_file
// with the parent's workspace confinement, file system and gate.

package acpprovider

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/subagents/internal/runkit"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// resolve confines a path the child named to the parent's workspace.
func (c *child) resolve(p string) (string, error) {
	path, err := c.env.Workspace.Resolve(p)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, workspace.ErrOutside) {
			reason = "outside the session's workspace"
		}
		return "", acp.ErrInvalidParams.WithData(map[string]any{"path": p, "reason": reason})
	}
	return path, nil
}

// readFile reads through the parent's file system (the editor's buffers
// when the parent's editor serves fs), within pr's read budget: the text
// is counted until its answer is in the output queue. A missing file is
// -32002.
func (c *child) readFile(ctx context.Context, pr *peer, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	path, err := c.resolve(req.Path)
	if err != nil {
		return nil, err
	}
	line, limit := 0, 0
	if req.Line != nil {
		line = int(*req.Line)
	}
	if req.Limit != nil {
		limit = int(*req.Limit)
	}
	reserve := c.p.o.MaxReadBytes
	pr.load.add(pr, load{Budget: 1})
	err = pr.reads.take(ctx, reserve, func() {
		// Info, not Warn: an agent that reads files in parallel meets the
		// budget in its ordinary course; one that takes no answers stays
		// here, with all its reads but one waiting.
		pr.log.Info("the agent's file reads wait for one another: those being read and the answers it has not taken yet hold all the parent keeps for them",
			"settings", c.p.o.Limits.Settings.MaxQueuedOutput+", "+c.p.o.Settings.MaxReadBytes, "limit_bytes", pr.reads.size, "peer", pr.t.where())
	})
	pr.load.add(pr, load{Budget: -1})
	if err != nil {
		return nil, fsError(req.Path, err)
	}
	pr.load.add(pr, load{Reading: 1})
	text, err := c.env.FS.ReadTextFile(ctx, path, line, limit)
	pr.load.add(pr, load{Reading: -1})
	if err != nil {
		pr.reads.give(reserve)
		return nil, fsError(req.Path, err)
	}
	n := len(text)
	pr.reads.settle(reserve, n)
	rpc.AfterAnswer(ctx, func() { pr.reads.give(n) })
	return &acp.ReadTextFileResponse{Content: text}, nil
}

// writeFile writes through the parent's file system after the parent's
// gate allowed the edit (or a permission question of the child's did).
func (c *child) writeFile(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	path, err := c.resolve(req.Path)
	if err != nil {
		return nil, err
	}
	if workspace.IsControl(path) || !c.grants.takeEdit(path) {
		var old *string
		if text, err := c.env.FS.ReadTextFile(ctx, path, 0, 0); err == nil {
			old = &text
		}
		verb := "Write "
		if old == nil {
			verb = "Create "
		}
		title := verb + c.shown(path)
		err := c.gateAction(ctx, tools.PermissionRequest{
			ToolName:  gateEdit,
			Title:     title,
			Kind:      tools.KindEdit,
			Effect:    tools.EditEffect(path),
			Content:   []tools.Content{{Type: tools.ContentDiff, Path: path, OldText: old, NewText: req.Content}},
			Locations: []tools.Location{{Path: path}},
		})
		if err != nil {
			return nil, err
		}
	}
	if err := c.env.FS.WriteTextFile(ctx, path, req.Content); err != nil {
		return nil, fsError(req.Path, err)
	}
	return &acp.WriteTextFileResponse{}, nil
}

// fsError maps a file system failure onto the wire.
func fsError(path string, err error) error {
	switch {
	case errors.Is(err, tools.ErrNotExist):
		return acp.ErrResourceNotFound.WithData(map[string]any{"path": path})
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return acp.ErrRequestCancelled
	case errors.Is(err, workspace.ErrTooLarge):
		// The child can ask again with line and limit; the reason names
		// the parent's read limit and its setting.
		return acp.ErrInvalidParams.WithData(map[string]any{"path": path, "reason": runkit.Cut(err.Error(), 300)})
	}
	return acp.ErrInternal.WithData(map[string]any{"path": path, "reason": runkit.Cut(err.Error(), 300)})
}

// shown is path relative to the child's cwd when it is inside it.
func (c *child) shown(path string) string {
	if rel, err := filepath.Rel(c.cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
