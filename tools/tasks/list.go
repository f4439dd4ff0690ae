// This file implements the task_list tool.

package tasks

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/dshd/dshd/tools"
)

// ListName is the task_list tool's name.
const ListName = "task_list"

// listParams: task_list takes no arguments.
type listParams struct{}

//go:embed list.md
var listDescription string

type listTool struct{ base }

func newList() *listTool {
	return &listTool{base{name: ListName, description: listDescription, schema: schemaOf[listParams]()}}
}

func (t *listTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return unbound(), nil
}

func (t *listTool) BindTasks(s *Set) tools.Tool {
	return &bound{Tool: t, set: s, exec: func(_ context.Context, s *Set, in json.RawMessage) (*tools.Result, error) {
		if _, err := decode[listParams](in); err != nil {
			return tools.Errorf("%v", err), nil
		}
		return &tools.Result{Output: s.Describe()}, nil
	}}
}
