// This file implements the task_read tool.

package tasks

import (
	"context"
	_ "embed"

	"github.com/dshd/dshd/tools"
)

// ReadName is the task_read tool's name.
const ReadName = "task_read"

//go:embed read.md
var readDescription string

func newRead() *tool[idArg] {
	return newTool(ReadName, readDescription, func(_ context.Context, s *Set, p idArg) (*tools.Result, error) {
		return viewResult(s, p.ID, ""), nil
	})
}
