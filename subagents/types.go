// This file defines the vocabulary of the subagent seam: what a caller asks
// for (StartRequest), what a child inherits (Scope), what a run returns
// (Result), the provider and run contracts, and the sink through which the
// editor sees children (Exposure).

package subagents

import (
	"context"
	"encoding/json"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools"
)

// DefaultMaxDepth is the default depth limit of a whole delegation tree: a
// top-level session is depth 0, its children depth 1, and so on; a Start
// that would create a child deeper than the limit is rejected.
const DefaultMaxDepth = 3

// StopReason is how a run ended.
type StopReason string

// Stop reasons of a run.
const (
	StopCompleted StopReason = "completed"
	StopAborted   StopReason = "aborted"
	StopError     StopReason = "error"
	StopMaxTokens StopReason = "max-tokens"
	StopRefusal   StopReason = "refusal"
)

// Capabilities are the start-time features a provider declares statically.
// The service checks every requested one before any child exists.
type Capabilities struct {
	// OutputSchema: the child's final answer is JSON validated against a
	// schema and delivered as Result.Structured.
	OutputSchema bool
	// DepthLimit: the caller may limit how deep below this run children go.
	DepthLimit bool
	// ToolFilter: the caller may restrict the child's tools.
	ToolFilter bool
}

// ToolFilter restricts a child's tools. An empty Allow allows every tool;
// Deny removes tools from what Allow leaves. An unknown name fails Start.
type ToolFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Scope is what an agent can delegate from: the parent of any child it
// starts. A session's own agent has a Scope of depth 0; each child gets its
// own Scope, one deeper. A Scope is a session's [session.Delegation]: the
// session attaches it when it is built ([Scope.Attach]) and binds its
// delegating tools to it, so the subagent tool receives the calling
// agent's Scope typed, per session.
type Scope struct {
	// Service is where providers are found.
	Service *Service
	// SessionID is the id the editor knows this agent's session by: the
	// client's session for a top-level agent, the minted child id for an
	// exposed child, the parent's for a child the editor does not see.
	SessionID string
	// Depth is this agent's depth: 0 for a session's own agent.
	Depth int
	// MaxDepth is the absolute depth limit in force for this subtree.
	MaxDepth int
	// Expose is the editor's view of children; nil when the client did not
	// opt in to subagent sessions.
	Expose Exposure

	// Session is the delegating agent's session, set by Attach: an
	// in-process child is built from it ([session.Session.ChildConfig]),
	// a fork shares its agent's completed turns.
	Session *session.Session
	// What the delegating session lends an out-of-process child, set by
	// Attach from Session: its working directory (never the daemon's) and
	// other roots, its tools' environment (workspace, file system, runner,
	// permission gate) and its MCP server entries (ACP JSON).
	Cwd                   string
	AdditionalDirectories []string
	Env                   *tools.Env
	MCPServers            json.RawMessage
}

// StartRequest asks a provider for one child run.
type StartRequest struct {
	// Prompt is the task.
	Prompt string
	// Description is a one-line summary for display.
	Description string
	// Name labels the child (the binding's tool name by default).
	Name string

	// Start-time capabilities; requesting one the provider does not declare
	// fails Start with UNSUPPORTED_CAPABILITY.
	OutputSchema json.RawMessage
	DepthLimit   *int
	ToolFilter   *ToolFilter

	// Overrides of what the child inherits from Parent; zero values
	// inherit.
	Model        string
	MaxTokens    int
	SystemPrompt string
	// Persona is extra instructions for this child only.
	Persona string
	// DenyPermissions pins the child's permission requests to "deny": each
	// is rejected at once and the child is told its scope is fixed.
	DenyPermissions bool
	// Budget bounds the child and all its descendants; zero fields are
	// unbounded.
	Budget Budget
	// Meter is the delegating turn's meter (tools.Call.Meter): the run's
	// usage rolls up into it, and its bounds and its ancestors' bind the
	// child as the child's own Budget does. Nil: nobody above the run
	// counts it. Providers charge the meter [RunMeter] gives.
	Meter *budget.Meter

	// Parent is the delegating agent's scope; required.
	Parent *Scope
	// ToolCallID is the parent's tool call that runs this child (used to
	// link the child in the editor and to label fallback progress).
	ToolCallID string
	// Progress receives a bounded summary of the child's progress when the
	// editor does not see the child as its own session; may be nil.
	Progress func(Progress)
	// Activity, when set, receives what the child does as it does it,
	// whether or not the editor sees the child, in every run of it
	// (resumed ones too): a background task's output. It is called in
	// order and must not block.
	Activity func(Activity)

	// Options are the binding's provider-specific settings (for example an
	// acp binding's command or socket), passed through unchanged; in-process
	// providers ignore them.
	Options map[string]string
}

// Budget bounds a child together with every descendant it starts, from a
// definition's maxTurns and maxTokens or a binding's max-turns and
// max-tokens. A provider enforces it through the run's meter
// ([RunMeter]): an in-process child checks it before each model call; an
// acp child is told what is left (session/new _meta, which a child dshd
// enforces) and is stopped by the parent when what it reports spends it.
type Budget struct {
	// MaxTurns bounds the model round trips of the child and its
	// descendants.
	MaxTurns int `json:"maxTurns,omitempty"`
	// MaxTokens bounds the tokens (input and output) of the child and its
	// descendants.
	MaxTokens int `json:"maxTokens,omitempty"`
}

// Limits is b as a meter's bounds.
func (b Budget) Limits() budget.Limits {
	return budget.Limits{Tokens: int64(max(b.MaxTokens, 0)), Turns: int64(max(b.MaxTurns, 0))}
}

// RunMeter is the meter a run of req charges: a child of the delegating
// turn's (req.Meter) bounded by req.Budget. Everything the child and its
// descendants spend is charged to it and so to the turn above; the turn's
// bounds, and its ancestors', bind it too.
func RunMeter(req StartRequest) *budget.Meter { return req.Meter.Child(req.Budget.Limits()) }

// Progress is the fallback view of a running child, shown in the parent's
// tool call.
type Progress struct {
	// Text is the child's message text so far (bounded).
	Text string
	// Tools are the titles of the child's tool calls so far, with status.
	Tools []string
	Usage llm.Usage
}

// Activity is one thing a child did: a piece of its message text, a tool
// call it started, or a model call's usage.
type Activity struct {
	// Text is a chunk of the child's message; a new message starts with
	// NewMessage set.
	Text       string
	NewMessage bool
	// Tool is the title of a tool call the child started.
	Tool string
	// Usage is one model call's usage.
	Usage *llm.Usage
}

// Result is how a run ended. A child-level failure is a Result with
// StopError, never an error.
type Result struct {
	StopReason StopReason
	// Output is the child's last assistant message with non-empty content,
	// else its streamed text, else "".
	Output string
	// Structured is the validated JSON answer when OutputSchema was asked.
	Structured json.RawMessage
	// Diagnostic explains a non-completed run to people: at most 4 KiB,
	// never tool inputs, file contents, environment values or credentials.
	Diagnostic string
	// Usage is the child's token usage for this run, everything its own
	// descendants spent included.
	Usage llm.Usage
	// OutOfBudget reports that the run stopped because its budget, or one
	// above it, ran out; StopReason is then StopMaxTokens and Diagnostic
	// says which budget.
	OutOfBudget bool
	// LastMessage is a copy of the child's last assistant message; nil when
	// it had none.
	LastMessage *llm.Message
	// ChildSessionID is the id the editor knows the child by, when exposed.
	ChildSessionID string
}

// Provider is one transport for running children.
type Provider interface {
	Name() string
	Capabilities() Capabilities
	// InheritsParentContext reports whether the child sees the parent's
	// conversation (fork) or only its prompt (spawn, acp).
	InheritsParentContext() bool
	// Start creates the child and returns once it exists; the caller owns
	// the run from then on. A failed Start leaves nothing behind. A ctx
	// that has already ended starts no child: Start returns a run that
	// settled aborted.
	Start(ctx context.Context, req StartRequest) (Run, error)
}

// Run is a started child. Dispose is required on every path.
type Run interface {
	ID() string
	// Wait blocks until the run ends. It returns an error only when ctx
	// ends first or the run could not be observed at all; a child-level
	// failure is a Result with StopError.
	Wait(ctx context.Context) (Result, error)
	// Cancel stops the child and its descendants; the run ends aborted. A
	// run cancelled before anyone waited for it may settle without
	// running at all.
	Cancel()
	// Dispose cancels what remains and returns once the child and
	// everything it started are quiet. It is idempotent.
	Dispose() error
}

// Steerable is a Run that accepts messages while it runs.
type Steerable interface {
	SendMessage(ctx context.Context, text string) error
}

// Resumable is a Run whose finished conversation can be continued.
type Resumable interface {
	Resume(ctx context.Context, prompt string) (Run, error)
}

// Durable is a Run whose child can be rebuilt once the run's process, or
// this daemon, is gone: Snapshot is what its provider's [Restorer] takes
// (an in-process child's conversation; an acp child's session on its
// agent). It is taken from a run that has ended.
type Durable interface {
	Snapshot() (json.RawMessage, error)
}

// Restorer is a Provider that rebuilds a child from a [Durable] run's
// snapshot. The run Restore returns has ended; resuming it ([Resumable])
// continues the child's conversation: in process from the snapshot, for
// an acp child through its agent's session/resume or session/load. req is
// the start request the child was started with (its Prompt unused).
type Restorer interface {
	Restore(ctx context.Context, req StartRequest, snapshot json.RawMessage) (Run, error)
}

// Settling is a Run that tells when it has settled without being waited
// for: Done is closed once Wait would return at once. The [Service]
// follows such a run through Done, so that only its owner's Wait reaches
// the run's Wait. A provider whose child begins its work at the owner's
// first Wait — so that a Cancel straight after Start always comes first
// and the child never runs — must be Settling; the in-process providers
// are.
type Settling interface {
	Done() <-chan struct{}
}

// Reachable is a Run whose child others can reach while it lives: an
// in-process child is in the agent registry under the run's id. It is not
// a runtime capability for callers but what the [Service] needs to keep
// its promise to start observers: as it announces the run's start it
// calls HoldReachable, and it calls release once every observer it
// announced the start to has seen it (returned, panicked or unsubscribed).
// Until release, the child stays reachable even after the run ended and
// was disposed; Dispose still stops it and returns as usual.
type Reachable interface {
	HoldReachable() (release func())
}

// Exposure is how the editor sees children as ACP subagent sessions. It is
// implemented by acp/server for clients that opted in; a nil Exposure means
// the fallback (progress folded into the parent's tool call). Every method
// writes through the connection's single ordered writer before returning.
type Exposure interface {
	// Announce mints the child's session id and announces it on parent's
	// stream (subagent_update) before any of its traffic.
	Announce(parent string, a Announcement) (child string, err error)
	// Message records the task sent to the child (session_message on both
	// streams).
	Message(parent, child, text string)
	// Emit sends one of the child's agent events on the child's stream.
	Emit(child string, ev agent.Event)
	// EmitRaw sends an ACP session update (JSON) on the child's stream as
	// is; used to relay another ACP agent's updates.
	EmitRaw(child string, update json.RawMessage)
	// State reports the child's work state on its parent's stream.
	State(child string, s State)
	// Forget drops the child's routes; nothing more is sent for it.
	Forget(child string)
}

// Announcement describes a child to the editor.
type Announcement struct {
	Title       string
	Description string
	// Cancel is called when the editor cancels this child; nil means the
	// editor may not cancel it.
	Cancel func()
	// Cwd is set only when the child runs somewhere other than the parent.
	Cwd string
	// ID, when set, is the id the child had before (a restored child the
	// editor may know from a replay): it is announced again under it,
	// unless the id is in use.
	ID string
}

// WorkState is a child's activity.
type WorkState string

// Work states.
const (
	StateRunning        WorkState = "running"
	StateRequiresAction WorkState = "requires_action"
	StateIdle           WorkState = "idle"
	StateUnknown        WorkState = "unknown"
)

// State is a work state snapshot; StopReason, Error and Usage are set on
// idle.
type State struct {
	State      WorkState
	StopReason StopReason
	// Error describes a StopError run.
	Error string
	Usage *llm.Usage
}
