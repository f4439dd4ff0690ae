// This file implements the task_read tool.

package tasks

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/dshd/dshd/tools"
)

// ReadName is the task_read tool's name.
const ReadName = "task_read"

//go:embed read.md
var readDescription string

type readTool struct{ base }

func newRead() *readTool {
	return &readTool{base{name: ReadName, description: readDescription, schema: schemaOf[idArg]()}}
}

func (t *readTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return unbound(), nil
}

func (t *readTool) BindTasks(s *Set) tools.Tool {
	return &bound{Tool: t, set: s, exec: func(_ context.Context, s *Set, in json.RawMessage) (*tools.Result, error) {
		p, err := decode[idArg](in)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		if res := needID(p.ID); res != nil {
			return res, nil
		}
		r, err := s.Read(p.ID)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		return &tools.Result{Output: view(r, s.o.Now())}, nil
	}}
}
