// This file implements the task_wait tool.

package tasks

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/dshd/dshd/tools"
)

// WaitName is the task_wait tool's name.
const WaitName = "task_wait"

// The timeouts of a wait, in seconds.
const (
	DefaultWaitSeconds = 30
	MaxWaitSeconds     = 600
)

type waitParams struct {
	ID      string `json:"id,omitempty" jsonschema:"The task to wait for; leave it out to wait for whichever task settles first"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"How long to wait, in seconds (default 30, at most 600)"`
}

//go:embed wait.md
var waitDescription string

func newWait() *tool[waitParams] {
	return newTool(WaitName, waitDescription, func(ctx context.Context, s *Set, p waitParams) (*tools.Result, error) {
		if p.Timeout < 0 {
			return tools.Errorf("timeout must not be negative"), nil
		}
		secs := p.Timeout
		if secs == 0 {
			secs = DefaultWaitSeconds
		}
		secs = min(secs, MaxWaitSeconds)
		id := strings.TrimSpace(p.ID)
		w, err := s.Wait(ctx, id, time.Duration(secs)*time.Second)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return tools.Errorf("%v", err), nil
		case w.None:
			return &tools.Result{Output: "No background task is running, and none has settled since you last heard of it.\n\n" + Describe(s.List(), s.o.Now())}, nil
		case w.Settled:
			return viewResult(s, w.Task.ID, ""), nil
		case id != "":
			return viewResult(s, id, fmt.Sprintf("Task %s is still running after %ds.\n\n", id, secs)), nil
		}
		return &tools.Result{Output: fmt.Sprintf("No task settled within %ds.\n\n", secs) + Describe(s.List(), s.o.Now())}, nil
	})
}
