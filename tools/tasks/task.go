// This file defines the vocabulary of a session's tasks: what a task is at
// one moment (Info), the work it runs (Job) with the optional capabilities
// a job may have, and how one run of the work ended (Outcome).

package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// Kind is what a task runs.
type Kind string

// Task kinds.
const (
	// KindCommand is a command run_command started in the background.
	KindCommand Kind = "command"
	// KindSubagent is a subagent run started by a background binding.
	KindSubagent Kind = "subagent"
)

// State is where a task is in its life.
type State string

// Task states. Every state but StateRunning is settled.
const (
	StateRunning   State = "running"
	StateCompleted State = "completed"
	StateFailed    State = "failed"
	// StateCancelled: the model, the user or the editor cancelled the task,
	// or its session was closed or deleted.
	StateCancelled State = "cancelled"
	// StateInterrupted: the daemon stopped (or its client went away) while
	// the task ran; a journal that still says running after a crash loads
	// as interrupted too.
	StateInterrupted State = "interrupted"
)

// Settled reports whether the task is no longer running.
func (s State) Settled() bool { return s != StateRunning }

// Info is a task as it is at one moment.
type Info struct {
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"`
	Title string `json:"title"`
	State State  `json:"state"`
	// Output is what the task printed or said so far: at most the set's
	// output limit, the tail kept; Dropped counts the bytes that fell off
	// the front.
	Output  string `json:"output,omitempty"`
	Dropped int64  `json:"dropped,omitempty"`
	// Result is how the last run ended, for the model: a command's exit
	// status, a child's final answer or why it failed. "" while running.
	Result string    `json:"result,omitempty"`
	Usage  llm.Usage `json:"usage,omitzero"`
	// Started is when the task started; Ended when it last settled.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// Child is the id the editor knows a subagent task's child session
	// by, when the editor sees children.
	Child string `json:"child,omitempty"`
	// Runs counts the task's runs: 1, plus one per continue.
	Runs int `json:"runs,omitempty"`
}

// Outcome is how one run of a job ended.
type Outcome struct {
	// State is StateCompleted, StateFailed or StateCancelled.
	State State
	// Result is what the model is told: the exit status, the answer, the
	// failure.
	Result string
	// Usage is the run's token usage, when the job did not report it as
	// it went ([Output.AddUsage]).
	Usage llm.Usage
}

// Job is the work of one task: a command, a subagent run.
type Job interface {
	// Run does the work until it ends, or until ctx ends (the task was
	// cancelled, its session is closing): then it stops the work and
	// returns soon. It writes what the task shows to out as it comes.
	// Run is called once when the task starts and once after each
	// successful [Continuer.Continue], never twice at a time.
	Run(ctx context.Context, out *Output) Outcome
}

// Steerer is a Job that takes messages while it runs: the text reaches a
// child's next model call (or its next prompt, for an agent that has no
// steering of its own). An error says why it cannot, naming what is
// missing.
type Steerer interface {
	Steer(ctx context.Context, text string) error
}

// Continuer is a Job whose settled work can go on with a new prompt,
// keeping what it did (a child keeps its conversation). Continue prepares
// the next run; the set then calls Run again. An error says why it
// cannot, naming what is missing.
type Continuer interface {
	Continue(ctx context.Context, prompt string) error
}

// Releaser is a Job that holds something while it may still be continued
// (a child process, a pooled connection, an in-process child). Release
// lets go of it: the set calls it once the task has been idle for the idle
// time, and when the set closes. A released job may still continue, by
// restoring what it needs.
type Releaser interface {
	Release()
}

// Saver is a Job that can be written to the journal and rebuilt from it
// ([Options.Restore]) so that a task loaded after a restart can still be
// continued. Save is called when a run settles.
type Saver interface {
	Save() json.RawMessage
}

// Spec describes a task to start.
type Spec struct {
	Kind  Kind
	Title string
}
