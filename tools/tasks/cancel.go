// This file implements the task_cancel tool.

package tasks

import (
	"context"
	_ "embed"

	"github.com/dshd/dshd/tools"
)

// CancelName is the task_cancel tool's name.
const CancelName = "task_cancel"

//go:embed cancel.md
var cancelDescription string

func newCancel() *tool[idArg] {
	return newTool(CancelName, cancelDescription, func(ctx context.Context, s *Set, p idArg) (*tools.Result, error) {
		if _, err := s.Cancel(ctx, p.ID); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return tools.Errorf("%v", err), nil
		}
		return viewResult(s, p.ID, ""), nil
	})
}
