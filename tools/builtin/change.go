// This file holds what the file tools share: the file a path argument
// names, the text it has, and a prepared change asked for and written
// (rewrite: the whole call of write_file and edit_file but the change).

package builtin

import (
	"context"
	"errors"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// fileOf resolves the file a tool's path argument names in the call's
// workspace. res is the model's answer when the argument is missing, the
// path is refused, or the call has no workspace.
func fileOf(call *tools.Call, arg string) (env *tools.Env, path string, res *tools.Result) {
	if arg == "" {
		return nil, "", tools.Errorf("path is required")
	}
	env, res = envOf(call)
	if res != nil {
		return nil, "", res
	}
	path, err := env.Workspace.Resolve(arg)
	if err != nil {
		return nil, "", pathError(err)
	}
	return env, path, nil
}

// readOld reads the text a change replaces through file: nil when the
// file does not exist. res is the model's answer when it cannot be read,
// one over the read limit worded as too large to tooLarge; err ends the
// call (it was cancelled).
func readOld(ctx context.Context, env *tools.Env, path string, file target, tooLarge string) (old *string, res *tools.Result, err error) {
	text, err := file.ReadTextFile(ctx)
	switch {
	case err == nil:
		return &text, nil, nil
	case errors.Is(err, tools.ErrNotExist):
		return nil, nil, nil
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case errors.Is(err, workspace.ErrTooLarge):
		return nil, tools.Errorf("%s is too large to %s", env.Workspace.Display(path), tooLarge), nil
	}
	return nil, readError(env, path, err), nil
}

// rewrite runs a call of a tool that rewrites the file its path argument
// arg names (write_file, edit_file): it opens the file and reads the text
// it has (a file over the read limit is too large to tooLarge), prepare
// makes the change from it, and the change is asked for, written and
// answered with prepare's out. prepare gets the change with its path and
// old text (nil: no such file) and sets its title, text and line; its
// res, when not nil, answers the call instead, and nothing is written.
func rewrite(ctx context.Context, call *tools.Call, tool, arg, tooLarge string, prepare func(c *change) (out string, res *tools.Result)) (*tools.Result, error) {
	env, path, file, res := targetOf(call, arg)
	if res != nil {
		return res, nil
	}
	defer file.Close()
	old, res, err := readOld(ctx, env, path, file, tooLarge)
	if res != nil || err != nil {
		return res, err
	}
	c := &change{path: path, shown: env.Workspace.Display(path), old: old}
	out, res := prepare(c)
	if res != nil {
		return res, nil
	}
	if res, err := c.commit(ctx, call, tool, file); res != nil || err != nil {
		return res, err
	}
	return c.result(out), nil
}

// change is a new text a file tool has prepared for one file.
type change struct {
	title string  // "Edit main.go": the question's title and the result's
	path  string  // the resolved path
	shown string  // the path as the model and the user see it
	old   *string // the text now; nil for a file that does not exist
	text  string  // the text it gets
	line  int     // the 1-based line of the first change; 0 when it is not known
}

// diff is what the question and the result show of c.
func (c *change) diff() ([]tools.Content, []tools.Location) {
	return []tools.Content{{Type: tools.ContentDiff, Path: c.path, OldText: c.old, NewText: c.text}},
		[]tools.Location{{Path: c.path, Line: c.line}}
}

// commit asks permission for c, showing its diff, and writes it through
// file. A nil result and error mean it was written; otherwise res is the
// model's answer (refused, or the write failed), or err stops the turn.
func (c *change) commit(ctx context.Context, call *tools.Call, tool string, file target) (*tools.Result, error) {
	diff, loc := c.diff()
	if res, err := permit(ctx, call, tools.PermissionRequest{
		ToolName: tool, Title: c.title, Kind: tools.KindEdit, Effect: tools.EditEffect(c.path),
		Content: diff, Locations: loc,
	}); res != nil || err != nil {
		return res, err
	}
	if err := file.Commit(ctx, c.text); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tools.Errorf("cannot write %s: %v", c.shown, err), nil
	}
	return nil, nil
}

// result is the tool's answer once c is written, with out for the model.
func (c *change) result(out string) *tools.Result {
	diff, loc := c.diff()
	return &tools.Result{Output: out, Content: diff, Locations: loc, Title: c.title}
}
