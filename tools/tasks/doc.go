// Package tasks is a session's background work: long-running commands and
// subagent runs that outlive the tool call that started them.
//
// A [Set] belongs to one session. [Set.Start] turns a [Job] — a command
// (tools/builtin's run_command with background), a subagent run (a
// background binding of tools/subagent) — into a task with an id, a kind,
// a title, a state (running, completed, failed, cancelled, interrupted),
// its output so far (the tail, capped at [Options.OutputLimit]), its usage
// and its timestamps. At most [Options.MaxRunning] tasks run at once.
// Optional interfaces of a job are its capabilities, discovered by type
// assertion like the seam's: a [Steerer] takes messages while it runs, a
// [Continuer] goes on after it settled with a new prompt, a [Releaser]
// holds something between runs (a child process, a connection), let go of
// after [Options.IdleRelease], and a [Saver] can be rebuilt from the
// journal after a restart. A capability a job lacks is an error that
// names it, never a silent no-op.
//
// The model follows tasks with six tools ([Tools]): task_list, task_read
// (new output since the last read, or the result), task_wait (one or any,
// with a timeout), task_cancel, task_send (steer a running child) and
// task_continue (resume a settled child). They, run_command and the
// background subagent tool are [Binder]s: registered once for the daemon,
// bound to each session's set by the session (agent/session).
//
// When a task settles, the set keeps a [Notice] for the model.
// [Set.TakeNotices] hands the pending ones over; the session's agent asks
// before each of its model calls, so a notice reaches the running turn's
// next call, or the next turn's first. Nothing polls: a settle appends
// under a lock and sets an atomic flag, and the agent's check is one
// atomic load when nothing settled. task_wait sleeps on a channel that
// every settle closes.
//
// Durable: with [Options.Record] every start, continue and settle is a
// record in the session's journal, with the output as it comes (at most
// one record per task per [FlushInterval]) and a mark when the model has
// seen a result. [Set.Restore] rebuilds the tasks of a loaded session:
// one that the journal still says is running was cut short by a stop and
// is interrupted, with its output so far.
//
// Owned goroutines: one per running task, and timer callbacks (output
// records, idle releases). [Set.Close] stops every running task — closing
// or deleting the session cancels them, a stop of the daemon interrupts
// them — waits for all of them and releases every job. Cancelling a turn
// cancels no task: tasks belong to the session, not the turn.
//
// This package imports only tools and agent/llm of the project.
package tasks
