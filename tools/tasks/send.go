// This file implements the task_send tool.

package tasks

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dshd/dshd/tools"
)

// SendName is the task_send tool's name.
const SendName = "task_send"

type sendParams struct {
	ID      string `json:"id" jsonschema:"The running subagent task to send the message to"`
	Message string `json:"message" jsonschema:"What to tell it: a correction, a hint, a change of plan"`
}

func (p sendParams) taskID() string { return p.ID }

//go:embed send.md
var sendDescription string

func newSend() *tool[sendParams] {
	return newTool(SendName, sendDescription, func(ctx context.Context, s *Set, p sendParams) (*tools.Result, error) {
		if strings.TrimSpace(p.Message) == "" {
			return tools.Errorf("message is required"), nil
		}
		if err := s.Send(ctx, p.ID, p.Message); err != nil {
			return tools.Errorf("%v", err), nil
		}
		return &tools.Result{Output: fmt.Sprintf("Sent to task %s; it reads the message before its next step.", p.ID)}, nil
	})
}
