// This file implements the task_list tool.

package tasks

import (
	"context"
	_ "embed"

	"github.com/dshd/dshd/tools"
)

// ListName is the task_list tool's name.
const ListName = "task_list"

// listParams: task_list takes no arguments.
type listParams struct{}

//go:embed list.md
var listDescription string

func newList() *tool[listParams] {
	return newTool(ListName, listDescription, func(_ context.Context, s *Set, _ listParams) (*tools.Result, error) {
		return &tools.Result{Output: s.Describe()}, nil
	})
}
