// This file runs a background binding's delegations as tasks of the
// calling session (tools/tasks): the call returns with the task's id, the
// run goes on, and the task steers (Steerable), continues (Resumable),
// releases and restores (Durable, Restorer) the child through the seam.

package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
)

// background starts the delegation as a task and returns at once. The
// run belongs to the task, not to the turn: cancelling the turn leaves it
// running; the task's own cancel stops it.
func (t *tool) background(ctx context.Context, req subagents.StartRequest, in input) (*tools.Result, error) {
	scope := req.Parent
	if scope.Session == nil {
		return tools.Errorf("this agent cannot start background subagents: it has no session"), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	set := scope.Session.Tasks()
	j := &job{t: t, scope: scope, description: req.Description, prompt: in.Prompt}
	req.Activity = j.activity
	// The run outlives the turn: it is charged to the session's agent,
	// not to the turn that started it, whose budget it does not share.
	req.Meter = scope.Session.Agent().Meter()
	run, err := t.svc.Start(context.WithoutCancel(ctx), t.b.Provider, req)
	if err != nil {
		return startFailure(err), nil
	}
	j.run = run
	title := req.Description
	if title == "" {
		title = utf8cut.Line(in.Prompt, 80)
	}
	info, err := set.Start(tasks.Spec{Kind: tasks.KindSubagent, Title: t.b.ToolName + ": " + title}, j)
	if err != nil {
		_ = run.Dispose()
		return tools.Errorf("The subagent could not be started in the background: %v", err), nil
	}
	text := fmt.Sprintf("Started background task %s: the subagent %s works on %q while you go on. You are told when it settles. "+
		"task_read with id %q shows what it did so far, task_wait waits for it, task_send sends it a message while it runs, "+
		"task_continue gives it a new instruction after it settled (it keeps its conversation), task_cancel stops it.",
		info.ID, t.b.ToolName, title, info.ID)
	return &tools.Result{Output: text, RawOutput: map[string]any{"task": info.ID, "state": info.State}}, nil
}

// job is one background binding's run as a task's job: its current run
// (the first, or the last one resumed), and what it needs to rebuild the
// child once the run was released.
type job struct {
	t           *tool
	scope       *subagents.Scope
	description string
	prompt      string

	mu        sync.Mutex
	run       subagents.Run   // nil once released; guarded by mu
	snapshot  json.RawMessage // the last run's, for Restore; guarded by mu
	out       *tasks.Output   // the current run's output; guarded by mu
	wrote     bool            // the output has text; guarded by mu
	usageSeen bool            // the run reported usage as it went; guarded by mu
}

var (
	_ tasks.Steerer   = (*job)(nil)
	_ tasks.Continuer = (*job)(nil)
	_ tasks.Releaser  = (*job)(nil)
	_ tasks.Saver     = (*job)(nil)
)

// activity writes what the child does to the task's output.
func (j *job) activity(a subagents.Activity) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.out == nil {
		return
	}
	switch {
	case a.Text != "":
		if a.NewMessage && j.wrote {
			j.out.Write("\n\n")
		}
		j.out.Write(a.Text)
		j.wrote = true
	case a.Tool != "":
		j.out.Write("\n[tool] " + a.Tool + "\n")
		j.wrote = false
	case a.Usage != nil:
		j.out.AddUsage(*a.Usage)
		j.usageSeen = true
	}
}

// Run waits for the current run; cancelling the task cancels it.
func (j *job) Run(ctx context.Context, out *tasks.Output) tasks.Outcome {
	j.mu.Lock()
	j.out, j.usageSeen = out, false
	run := j.run
	j.mu.Unlock()
	if run == nil {
		return tasks.Outcome{State: tasks.StateFailed, Result: "The subagent's run was released before it could run."}
	}
	// The owner's Wait: an in-process child's turn begins here.
	res, err := waitCancellable(ctx, run)
	snap, _, serr := subagents.SnapshotOf(run)
	j.mu.Lock()
	j.out = nil
	if serr == nil && snap != nil {
		j.snapshot = snap
	}
	seen := j.usageSeen
	j.mu.Unlock()
	if err != nil {
		return tasks.Outcome{State: tasks.StateFailed, Result: fmt.Sprintf("%s: the run could not be followed to its end: %v", headlineError, err)}
	}
	if res.ChildSessionID != "" {
		out.SetChild(res.ChildSessionID)
	}
	o := tasks.Outcome{Result: resultFor(j.t.b.ToolName, res).Output}
	if !seen {
		o.Usage = res.Usage
	}
	switch res.StopReason {
	case subagents.StopCompleted:
		o.State = tasks.StateCompleted
	case subagents.StopAborted:
		o.State = tasks.StateCancelled
	default:
		o.State = tasks.StateFailed
	}
	return o
}

// Steer sends text to the running child.
func (j *job) Steer(ctx context.Context, text string) error {
	j.mu.Lock()
	run := j.run
	j.mu.Unlock()
	sr, ok := run.(subagents.Steerable)
	if !ok {
		return fmt.Errorf("the %s provider's children cannot take messages while they run (it lacks the Steerable capability); wait for the task and continue it instead", j.t.b.Provider)
	}
	if err := sr.SendMessage(ctx, text); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "subagents: "))
	}
	return nil
}

// Continue resumes the settled child with prompt: on its run when the
// task still holds it, else on a child restored from the last snapshot.
func (j *job) Continue(ctx context.Context, prompt string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.run == nil {
		run, err := j.restore(ctx)
		if err != nil {
			return err
		}
		j.run = run
	}
	rs, ok := j.run.(subagents.Resumable)
	if !ok {
		return fmt.Errorf("the %s provider's children cannot be continued (it lacks the Resumable capability); start a new one", j.t.b.Provider)
	}
	next, err := rs.Resume(ctx, prompt)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "subagents: "))
	}
	old := j.run
	j.run = next
	// The resumed run holds the child now.
	_ = old.Dispose()
	return nil
}

// restore rebuilds the child from the last snapshot; j.mu is held.
func (j *job) restore(ctx context.Context) (subagents.Run, error) {
	if j.snapshot == nil {
		return nil, fmt.Errorf("the %s provider kept nothing to continue this child from (its runs are not Durable)", j.t.b.Provider)
	}
	// The binding as the session has it now: a definition file may have
	// changed it since, or the daemon restarted with other settings.
	t := j.t
	if sess := j.scope.Session; sess != nil {
		if tl, ok := sess.Tools().Get(t.b.ToolName); ok {
			if cur, isTool := tl.(*tool); isTool {
				t = cur
			}
		}
	}
	if t.b.Provider == "" {
		return nil, fmt.Errorf("this session has no subagent tool %q any more, which the task was started with", t.b.ToolName)
	}
	j.t = t
	req := t.request(input{Description: j.description, Prompt: j.prompt}, j.scope, "")
	req.Activity = j.activity
	req.Meter = j.scope.Session.Agent().Meter()
	run, err := t.svc.Restore(ctx, t.b.Provider, req, j.snapshot)
	if err != nil {
		return nil, fmt.Errorf("the subagent could not be brought back: %s", strings.TrimPrefix(err.Error(), "subagents: "))
	}
	return run, nil
}

// Release disposes of the run: the child, its process or connection.
// The snapshot stays, for a Continue that restores the child.
func (j *job) Release() {
	j.mu.Lock()
	run := j.run
	j.run = nil
	j.mu.Unlock()
	if run != nil {
		_ = run.Dispose()
	}
}

// saved is what the journal keeps of a job.
type saved struct {
	Tool        string          `json:"tool"`
	Description string          `json:"description,omitempty"`
	Prompt      string          `json:"prompt,omitempty"`
	Snapshot    json.RawMessage `json:"snapshot,omitempty"`
}

// Save returns the job as the journal keeps it.
func (j *job) Save() json.RawMessage {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, _ := json.Marshal(saved{Tool: j.t.b.ToolName, Description: j.description, Prompt: j.prompt, Snapshot: j.snapshot})
	return b
}

// RestoreJob returns the function that rebuilds the job of a subagent
// task loaded from the journal of the session that delegates from scope:
// nothing is started; a continue restores the child through the binding
// the session has under the saved tool name.
func RestoreJob(svc *subagents.Service, scope *subagents.Scope) func(kind tasks.Kind, raw []byte) (tasks.Job, error) {
	return func(kind tasks.Kind, raw []byte) (tasks.Job, error) {
		if kind != tasks.KindSubagent {
			return nil, fmt.Errorf("a %s task is not a subagent's", kind)
		}
		var sv saved
		if err := json.Unmarshal(raw, &sv); err != nil || sv.Tool == "" {
			return nil, errors.New("the saved subagent task is unreadable")
		}
		if sv.Snapshot == nil {
			return nil, errors.New("no snapshot of the child was saved")
		}
		t := &tool{svc: svc, b: Binding{ToolName: sv.Tool}}
		return &job{t: t, scope: scope, description: sv.Description, prompt: sv.Prompt, snapshot: sv.Snapshot}, nil
	}
}
