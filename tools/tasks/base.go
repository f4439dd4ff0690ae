// This file holds what the task tools share: the binding to a session's
// set, their static half and input decoding.

package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dshd/dshd/tools"
)

// Binder is a tool that works on its session's tasks: the task tools,
// run_command (its background mode) and a background subagent binding. It
// is registered once for the daemon; each session binds it to its own
// set.
type Binder interface {
	tools.Tool
	// BindTasks returns the tool as it runs in the session whose tasks
	// are s.
	BindTasks(s *Set) tools.Tool
}

// Tools returns the model-facing task tools, unbound.
func Tools() []tools.Tool {
	return []tools.Tool{newList(), newRead(), newWait(), newCancel(), newSend(), newContinue()}
}

// tool is a task tool: it runs only bound to a session's set, with its
// arguments P decoded (tools.Typed) and the task they name checked.
type tool[P any] struct {
	tools.Static
	run func(ctx context.Context, s *Set, p P) (*tools.Result, error)
}

func newTool[P any](name, description string, run func(ctx context.Context, s *Set, p P) (*tools.Result, error)) *tool[P] {
	static := tools.Static{ToolName: name, ToolDescription: description, Schema: tools.LazySchema[P](nil), ToolKind: tools.KindOther, Parallel: true}
	return &tool[P]{static, run}
}

func (t *tool[P]) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return unbound(), nil
}

// BindTasks returns the tool bound to s. It shares t's static half, whose
// schema is built once.
func (t *tool[P]) BindTasks(s *Set) tools.Tool {
	b := tools.NewTyped(t.Static, func(ctx context.Context, _ *tools.Call, p P) (*tools.Result, error) {
		if n, ok := any(p).(namesTask); ok {
			if res := needID(n.taskID()); res != nil {
				return res, nil
			}
		}
		return t.run(ctx, s, p)
	})
	return &b
}

// unbound is the result of a task tool outside any session.
func unbound() *tools.Result {
	return tools.Errorf("this agent has no background tasks")
}

// idArg is the argument of the tools that name one task.
type idArg struct {
	ID string `json:"id" jsonschema:"The task's id, as the tool that started it or task_list gave it (for example t1)"`
}

// namesTask is implemented by the arguments of the tools that work on
// one task (task_wait's id is optional: it does not).
type namesTask interface{ taskID() string }

func (a idArg) taskID() string { return a.ID }

// needID checks an id argument.
func needID(id string) *tools.Result {
	if strings.TrimSpace(id) == "" {
		return tools.Errorf("id is required: name the task (task_list lists them)")
	}
	return nil
}

// viewResult is the answer that shows task id's full view after lead, or
// the error of reading it.
func viewResult(s *Set, id, lead string) *tools.Result {
	r, err := s.Read(id)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	return &tools.Result{Output: lead + view(r, s.o.Now())}
}

// view is a task's full view for the model: what it is, its new output,
// and its result once settled.
func view(r Read, now time.Time) string {
	var b strings.Builder
	b.WriteString(header(r.Info, now))
	switch {
	case r.Lost > 0 && r.New == "":
		fmt.Fprintf(&b, "\n\n%d bytes of new output were printed, but fell off the %d bytes kept before they were read.", r.Lost, len(r.Output))
	case r.Lost > 0:
		fmt.Fprintf(&b, "\n\nNew output since the last read (%d earlier bytes of it are gone):\n%s", r.Lost, tools.Fence(r.New, ""))
	case r.New != "":
		fmt.Fprintf(&b, "\n\nNew output since the last read:\n%s", tools.Fence(r.New, ""))
	default:
		b.WriteString("\n\nNo new output since the last read.")
	}
	if r.State.Settled() && strings.TrimSpace(r.Result) != "" {
		b.WriteString("\n\nResult:\n")
		b.WriteString(r.Result)
	}
	return b.String()
}
