// This file implements the task_continue tool.

package tasks

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dshd/dshd/tools"
)

// ContinueName is the task_continue tool's name.
const ContinueName = "task_continue"

type continueParams struct {
	ID     string `json:"id" jsonschema:"The settled subagent task to continue"`
	Prompt string `json:"prompt" jsonschema:"The next instruction; the subagent still has its whole conversation"`
}

func (p continueParams) taskID() string { return p.ID }

//go:embed continue.md
var continueDescription string

func newContinue() *tool[continueParams] {
	return newTool(ContinueName, continueDescription, func(ctx context.Context, s *Set, p continueParams) (*tools.Result, error) {
		if strings.TrimSpace(p.Prompt) == "" {
			return tools.Errorf("prompt is required: say what the subagent should do next"), nil
		}
		if _, err := s.Continue(ctx, p.ID, p.Prompt); err != nil {
			return tools.Errorf("%v", err), nil
		}
		return &tools.Result{Output: fmt.Sprintf("Task %s is running again with its earlier conversation. You will be told when it settles; task_read or task_wait follow it.", p.ID)}, nil
	})
}
