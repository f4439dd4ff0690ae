// This file implements the task_cancel tool.

package tasks

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/dshd/dshd/tools"
)

// CancelName is the task_cancel tool's name.
const CancelName = "task_cancel"

//go:embed cancel.md
var cancelDescription string

type cancelTool struct{ base }

func newCancel() *cancelTool {
	return &cancelTool{base{name: CancelName, description: cancelDescription, schema: schemaOf[idArg]()}}
}

func (t *cancelTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return unbound(), nil
}

func (t *cancelTool) BindTasks(s *Set) tools.Tool {
	return &bound{Tool: t, set: s, exec: func(ctx context.Context, s *Set, in json.RawMessage) (*tools.Result, error) {
		p, err := decode[idArg](in)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		if res := needID(p.ID); res != nil {
			return res, nil
		}
		if _, err := s.Cancel(ctx, p.ID); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return tools.Errorf("%v", err), nil
		}
		r, err := s.Read(p.ID)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		return &tools.Result{Output: view(r, s.o.Now())}, nil
	}}
}
