// This file runs a command in the background: as a task of the session
// (tools/tasks), the call returning with its id and its first output.

package builtin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
)

// commandJob is a background command: a task's job.
type commandJob struct {
	runner tools.Runner
	cmd    tools.Command

	first     chan struct{} // closed at the first output, or the end
	firstOnce sync.Once

	mu       sync.Mutex
	terminal string // the editor's terminal, when the runner has one; guarded by mu
}

var _ tasks.Job = (*commandJob)(nil)

func (j *commandJob) arrived() { j.firstOnce.Do(func() { close(j.first) }) }

// Run runs the command until it ends or the task is cancelled (which
// stops it and everything it started, as the runner does for any call).
func (j *commandJob) Run(ctx context.Context, out *tasks.Output) tasks.Outcome {
	defer j.arrived()
	started := func(id string) {
		j.mu.Lock()
		j.terminal = id
		j.mu.Unlock()
	}
	res, err := j.runner.Run(ctx, j.cmd, started, func(chunk string) {
		out.Write(chunk)
		j.arrived()
	})
	switch {
	case ctx.Err() != nil:
		return tasks.Outcome{State: tasks.StateCancelled, Result: "stopped; the command and everything it started were ended"}
	case err != nil:
		return tasks.Outcome{State: tasks.StateFailed, Result: fmt.Sprintf("cannot run the command: %v", err)}
	}
	status, failed := exitStatus(res, j.cmd.Timeout)
	if failed {
		return tasks.Outcome{State: tasks.StateFailed, Result: status}
	}
	return tasks.Outcome{State: tasks.StateCompleted, Result: status}
}

// background starts cmd as a task and returns once its first output came,
// it ended, or FirstOutputWait passed: the task's id and what it printed
// so far (which counts as read).
func (t *runCommand) background(ctx context.Context, set *tasks.Set, runner tools.Runner, cmd tools.Command) (*tools.Result, error) {
	cmd.OutputLimit, cmd.OutputLimitSetting = set.OutputLimit()
	job := &commandJob{runner: runner, cmd: cmd, first: make(chan struct{})}
	info, err := set.Start(tasks.Spec{Kind: tasks.KindCommand, Title: utf8cut.Line(cmd.Command, 200)}, job)
	if err != nil {
		return tools.Errorf("cannot start the command in the background: %v", err), nil
	}
	timer := time.NewTimer(t.opts.FirstOutputWait)
	defer timer.Stop()
	select {
	case <-job.first:
	case <-timer.C:
	case <-ctx.Done():
	}
	r, err := set.Read(info.ID)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Started background task %s: %s\n", r.ID, utf8cut.Line(cmd.Command, 200))
	switch {
	case r.New != "":
		b.WriteString("First output:\n" + tools.Fence(r.New, "console") + "\n")
	default:
		b.WriteString("(no output yet)\n")
	}
	if r.State.Settled() {
		fmt.Fprintf(&b, "It has already ended (%s): %s.\n", r.State, r.Result)
	} else {
		fmt.Fprintf(&b, "It keeps running. task_read with id %q shows its new output, task_wait waits for it to end, task_cancel stops it; you are told when it ends.\n", r.ID)
	}
	text := b.String()
	content := []tools.Content{tools.TextContent(text)}
	job.mu.Lock()
	if job.terminal != "" {
		// The editor shows the command's output live in its terminal.
		content = []tools.Content{{Type: tools.ContentTerminal, TerminalID: job.terminal, Text: text}}
	}
	job.mu.Unlock()
	return &tools.Result{
		Output:    text,
		Content:   content,
		RawOutput: map[string]any{"task": r.ID, "state": r.State},
	}, nil
}
