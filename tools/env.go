// This file defines the environment tools run in: the workspace roots, the
// file system, the command runner, the permission gate and the plan sink.

package tools

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/dshd/dshd/tools/workspace"
)

// Env is a session's environment, shared by every call of the session's
// tools. Its fields are set once when the session (or a subagent child) is
// created; a child gets its own Env whose Permission wraps the parent's.
type Env struct {
	// Workspace confines paths to the session's roots.
	Workspace *workspace.Workspace
	// FS reads and writes text files; nil means the local disk through
	// Workspace (workspace.NewLocalFS).
	FS FileSystem
	// Runner runs commands.
	Runner Runner
	// Permission decides whether a call that changes things may run.
	Permission Permission
	// Plan publishes the agent's plan; nil drops it.
	Plan func(entries []PlanEntry)
}

// FileSystem reads and writes text files by absolute, already confined
// path. The editor-backed implementation goes through fs/read_text_file and
// fs/write_text_file, so the agent sees unsaved buffers.
type FileSystem interface {
	// ReadTextFile returns up to limit lines starting at the 1-based line
	// (0 for both means the whole file). A missing file is an error that
	// matches [ErrNotExist].
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	// WriteTextFile replaces the file's content, creating it (and its
	// parent directories, locally) when needed.
	WriteTextFile(ctx context.Context, path, content string) error
}

// ErrNotExist reports a file that does not exist, whichever FileSystem
// looked for it. It is [io/fs.ErrNotExist], so errors of the local disk
// match it as they are.
var ErrNotExist = fs.ErrNotExist

// Command is a command to run.
type Command struct {
	// Command is run by the shell ("sh -c") when Args is empty, or as the
	// program when Args is set.
	Command string
	Args    []string
	// Dir is absolute and inside the workspace.
	Dir string
	// Roots are the session's workspace roots (cwd first, then the
	// additional directories): where a sandboxed command may write. A
	// command without them may write only its temp dir and the caches.
	Roots   []string
	Env     []string // extra "NAME=value" entries
	Timeout time.Duration
	// OutputLimit caps the bytes of output kept (the tail is kept).
	OutputLimit int
	// OutputLimitSetting names the setting OutputLimit comes from, for a
	// runner that logs a cut to it (the editor's terminals, which may send
	// more than they were asked to keep); empty for none.
	OutputLimitSetting string
}

// CommandResult is the outcome of a finished (or killed) command.
type CommandResult struct {
	Output    string
	Truncated bool
	// ExitCode is nil when the process was killed by a signal.
	ExitCode *int
	Signal   string
	TimedOut bool
}

// SandboxDescriber is a [Runner] that can say, before a command runs, in
// which sandbox it will run, in words for the permission question (see
// [CommandQuestion]). An error means the command would be refused.
type SandboxDescriber interface {
	DescribeSandbox(cmd Command) (string, error)
}

// Runner runs commands. The editor-backed implementation uses terminal/*
// and reports the terminal id through started so the tool can embed it in
// its content; the local one uses os/exec in its own process group.
type Runner interface {
	Run(ctx context.Context, cmd Command, started func(terminalID string), output func(chunk string)) (CommandResult, error)
}

// Effect is what a call would do, for the permission gate.
type Effect uint8

// Effects a permission gate distinguishes.
const (
	EffectRead Effect = iota
	EffectEdit
	EffectExecute
	// EffectControl is an edit of a file that controls what runs (.git's
	// config and hooks, dshd's own settings; see workspace.IsControl). A
	// gate weighs it like EffectExecute: accept-edits asks about it.
	EffectControl
)

func (e Effect) String() string {
	switch e {
	case EffectRead:
		return "read"
	case EffectEdit:
		return "edit"
	case EffectExecute:
		return "execute"
	case EffectControl:
		return "edit of a control file"
	}
	return fmt.Sprintf("Effect(%d)", e)
}

// EditEffect is the effect of editing the resolved path p: EffectControl
// when it controls what runs, EffectEdit otherwise.
func EditEffect(p string) Effect {
	if workspace.IsControl(p) {
		return EffectControl
	}
	return EffectEdit
}

// PermissionRequest describes a call that needs approval.
type PermissionRequest struct {
	ToolCallID string
	ToolName   string
	Title      string
	Kind       Kind
	Effect     Effect
	Content    []Content
	Locations  []Location
	RawInput   any
	// Requester is the subagent this request comes from; empty for the
	// session's own agent. acp/server uses it to route a child's request.
	Requester string
}

// RememberKey is what an "always" answer to r is remembered under: its
// tool name, kept apart for control files, so allowing a tool's ordinary
// edits for good never covers .git/config, nor the reverse.
func (r PermissionRequest) RememberKey() string {
	if r.Effect == EffectControl {
		return r.ToolName + " (control files)"
	}
	return r.ToolName
}

// Decision is the outcome of a permission request.
type Decision uint8

// Decisions.
const (
	Allowed Decision = iota + 1
	Rejected
	// Cancelled means the turn was cancelled while the request was pending;
	// the tool must not run and the call ends as cancelled.
	Cancelled
	// Refused is a rejection nobody was asked for: a rule decided it (a
	// subagent bound with deny-permissions, a session with nobody to ask).
	Refused
)

func (d Decision) String() string {
	switch d {
	case Allowed:
		return "allowed"
	case Rejected:
		return "rejected"
	case Cancelled:
		return "cancelled"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("Decision(%d)", d)
}

// Permission decides whether a call may run. Implementations apply the
// session's mode (ask, accept-edits, yolo) and remember "always" answers.
type Permission interface {
	Check(ctx context.Context, req PermissionRequest) (Decision, error)
}
