// This file defines what a tool is: its interface, a call, its progress and
// its result.

package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshd/dshd/agent/budget"
)

// Kind is the ACP tool kind shown as an icon by editors.
type Kind string

// Tool kinds, as ACP v1 names them.
const (
	KindRead       Kind = "read"
	KindEdit       Kind = "edit"
	KindDelete     Kind = "delete"
	KindMove       Kind = "move"
	KindSearch     Kind = "search"
	KindExecute    Kind = "execute"
	KindThink      Kind = "think"
	KindFetch      Kind = "fetch"
	KindSwitchMode Kind = "switch_mode"
	KindOther      Kind = "other"
)

// Tool is one capability the model can call.
type Tool interface {
	// Name is the model-facing name: letters, digits, '_' and '-', at most
	// 64 characters.
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// InputSchema is the JSON Schema of the tool's arguments (an object).
	InputSchema() json.RawMessage
	// Kind is the ACP tool kind.
	Kind() Kind
	// Execute runs one call. See the package doc for the error contract.
	Execute(ctx context.Context, call *Call) (*Result, error)
}

// Titler is implemented by tools that can describe a call before it runs
// ("Read main.go", "go test ./..."). Tools without it, and an empty title,
// get their name as the title.
type Titler interface {
	Title(input json.RawMessage) string
}

// Parallel is implemented by tools that declare whether several calls of
// them may run at the same time. Tools without it are assumed safe.
type Parallel interface {
	ParallelSafe() bool
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the tool call id the editor sees.
	ID string
	// Input is the arguments object the model wrote, already checked to be
	// valid JSON.
	Input json.RawMessage
	// Env is the session's environment.
	Env *Env
	// Report publishes progress while the tool runs; never nil.
	Report Reporter
	// Meter is the running turn's: a tool that delegates (the subagent
	// tool) charges its children to it, and its bounds bind them. Nil
	// outside a turn.
	Meter *budget.Meter
}

// Reporter publishes a running tool call's progress to the editor.
type Reporter interface {
	// Update replaces the call's displayed content, locations or title
	// (zero values leave a field unchanged).
	Update(u Progress)
}

// Progress is an interim view of a running call.
type Progress struct {
	Title     string
	Content   []Content
	Locations []Location
}

// ReporterFunc adapts a function to [Reporter].
type ReporterFunc func(Progress)

// Update calls f(u).
func (f ReporterFunc) Update(u Progress) { f(u) }

// Discard is a Reporter that drops everything.
var Discard Reporter = ReporterFunc(func(Progress) {})

// Result is what a finished call returns.
type Result struct {
	// Output is the text the model receives.
	Output string
	// IsError marks a failure the model should see and may recover from.
	IsError bool
	// Content is what the editor shows (text, diffs, terminals); nil shows
	// Output as text.
	Content []Content
	// Locations are the files the call touched.
	Locations []Location
	// RawOutput is structured output for the editor's rawOutput field.
	RawOutput any
	// Title, when set, replaces the call's title.
	Title string
}

// Errorf returns an error result for the model.
func Errorf(format string, args ...any) *Result {
	return &Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// ContentType selects the variant of [Content].
type ContentType string

// Content variants, mirroring ACP ToolCallContent.
const (
	ContentText     ContentType = "text"
	ContentDiff     ContentType = "diff"
	ContentTerminal ContentType = "terminal"
	// ContentSession links a call to another session (a subagent's). Only
	// acp/server decides whether the editor may see it.
	ContentSession ContentType = "session"
)

// Content is one item of a tool call's displayed content.
type Content struct {
	Type ContentType `json:"type"`
	// Text is set for ContentText.
	Text string `json:"text,omitempty"`
	// Path, OldText and NewText are set for ContentDiff; OldText is nil
	// for a new file. Path is absolute.
	Path    string  `json:"path,omitempty"`
	OldText *string `json:"oldText,omitempty"`
	NewText string  `json:"newText,omitempty"`
	// TerminalID is set for ContentTerminal. Text, on a terminal item,
	// is the finished command's output as text, shown where the terminal
	// is gone: a session's record keeps it, not the terminal, so a replay
	// on a later connection still shows what the command printed.
	TerminalID string `json:"terminalId,omitempty"`
	// SessionID is set for ContentSession.
	SessionID string `json:"sessionId,omitempty"`
}

// TextContent returns a text content item.
func TextContent(s string) Content { return Content{Type: ContentText, Text: s} }

// Location is a file (and optionally a 1-based line) a call touched.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// PlanEntry is one step of the agent's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high, medium, low
	Status   string `json:"status"`   // pending, in_progress, completed
}
