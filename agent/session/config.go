// This file is the one place a live session is built: Config, New, and
// the configuration a subagent child of a session starts from.

package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/tasks"
	"github.com/dshd/dshd/tools/workspace"
)

// Config is what a live session is built from: a client's session
// (acp/server), a subagent child (subagents/internal/inproc, starting from
// [Session.ChildConfig]) or a test's parent. New copies it; a zero field
// takes the default its comment names.
type Config struct {
	// ID identifies the session and its agent (in Registry); required.
	ID string
	// Cwd (absolute, required) and AdditionalDirectories are the session's
	// roots; file tools stay inside them.
	Cwd                   string
	AdditionalDirectories []string

	// Model is the backend (required); ModelID the model to ask for.
	Model   llm.Model
	ModelID string
	// MaxTokens, ContextWindow and MaxTurnRequests are the agent's limits
	// (0: the agent's defaults).
	MaxTokens, ContextWindow, MaxTurnRequests int
	// Meter counts everything the session's agent spends, with its
	// subagents: a subagent child's run meter, or a bounded root for a
	// session an ACP parent gave a budget. Nil: an unbounded one of its
	// own. TurnLimits bound each turn with its subagents
	// (--max-tokens-per-turn). See [agent.Options].
	Meter      *budget.Meter
	TurnLimits budget.Limits
	// Thinking, when set, turns the model's thinking on or off; nil
	// leaves it to the backend.
	Thinking *bool

	// Tools is the session's tool set; when the session connects MCP
	// servers they go into a layer of its own over it. Nil: none.
	Tools *tools.Registry
	// ConnectMCP, when set, connects the session's MCP servers: it
	// registers their tools in the session's own layer and returns a
	// closer (run by Close) and warnings for the client.
	ConnectMCP func(ctx context.Context, layer *tools.Registry) (closer func(), warnings []string)
	// MCPServers are the session's MCP server entries (ACP JSON), which an
	// acp child may be given.
	MCPServers json.RawMessage

	// FS, when set, returns the session's file system given its local one
	// (the workspace's local disk): the editor's, which may fall back to
	// the local one for what it does not offer. Nil: the local disk.
	FS func(local tools.FileSystem) tools.FileSystem
	// Runner is the editor-side command runner; nil leaves the tools to
	// local processes (and tells an acp child the parent lends none).
	Runner tools.Runner
	// Permission, when set, is the session's gate as given (a subagent
	// child's, over its parent's) and Mode and Asker are unused. Otherwise
	// the session has a permission policy of its own in Mode (default ask)
	// that asks the editor through Asker.
	Permission tools.Permission
	Mode       permission.Mode
	Asker      permission.Asker

	// System, when set, returns the system prompt of each turn; nil is
	// the default described at [Session.SystemPrompt]. TurnStarting, when
	// set, is called at the start of each turn once it is running (a
	// subagent run hands over the steering messages queued before then).
	System       func(ctx context.Context) (string, error)
	TurnStarting func()
	// Now dates the default system prompt (default time.Now).
	Now func() time.Time
	// Instructions bound the project's AGENTS.md the default system
	// prompt holds (zero: prompt's defaults); a child inherits them.
	Instructions prompt.InstructionsLimits
	// Reads bound each read of the workspace's local disk (zero: the
	// workspace package's defaults), whoever reads: a tool, a child; a
	// child shares its parent's file system and so its bound.
	Reads workspace.ReadLimits

	// Delegation, when set, binds the session's delegating tools to it
	// (subagents.Scope implements it); nil: the session cannot delegate.
	Delegation Delegation
	// Tasks configures the session's background tasks (tools/tasks); New
	// sets its Record and Sync to the session's journal. Its Restore
	// rebuilds the jobs of tasks loaded from the journal.
	Tasks tasks.Options

	// History is the conversation to continue; ContextUsed the tokens in
	// context after its last model call, when known (a reopened session's
	// last reported usage).
	History     agent.History
	ContextUsed int64
	// Stored is the session's journal (from [Create] or [Load]); nil: the
	// session records nothing (a subagent child, whose traffic its root
	// session records). New takes ownership of it only when it succeeds.
	Stored *Stored
	// Registry, when set, lists the session's agent while it is open.
	Registry *agent.Registry
	// Logger receives the session's logs; nil discards them.
	Logger *slog.Logger

	// workspace and fs are a child's: its parent's roots, not resolved
	// again, and its parent's file system.
	workspace *workspace.Workspace
	fs        tools.FileSystem
	// endingTurn, when set (tests), is called once a turn's work has
	// returned and before its end is synced: the point where a Close must
	// still wait for the turn.
	endingTurn func()
}

// Delegation binds a session's delegating tools (subagents.Scope
// implements it). New calls Attach once, before the session is used, with
// the session and its tool set; the agent sees the tool set Attach
// returns.
type Delegation interface {
	Attach(s *Session, ts agent.ToolSet) agent.ToolSet
}

// WorkspaceError is New's error when the session cannot be confined to
// its roots: a cwd or directory that is not absolute, or cannot be
// resolved. Err is the workspace's reason.
type WorkspaceError struct{ Err error }

func (e *WorkspaceError) Error() string { return "session: " + e.Err.Error() }
func (e *WorkspaceError) Unwrap() error { return e.Err }

// New builds a live session from cfg: its workspace, its tool layer (MCP
// servers connected into it), its permission policy or gate, its
// environment, its agent and, with cfg.Stored, the journal that records
// the agent's conversation. It panics without cfg.ID or cfg.Model, which
// is a programming error.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.ID == "" || cfg.Model == nil {
		panic("session: Config.ID and Config.Model are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// What is logged and told of a cut AGENTS.md names the bound.
	settingnames.Fill(&cfg.Instructions.Settings)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ws, fs := cfg.workspace, cfg.fs
	if ws == nil {
		var err error
		if ws, err = workspace.New(cfg.Cwd, cfg.AdditionalDirectories); err != nil {
			return nil, &WorkspaceError{Err: err}
		}
		local := workspace.NewLocalFS(ws)
		local.ReadLimits, local.Logger = cfg.Reads, log
		fs = local
		if cfg.FS != nil {
			fs = cfg.FS(fs)
		}
	}

	s := &Session{id: cfg.ID, cfg: cfg, log: log, stored: cfg.Stored, system: cfg.System}
	if s.system == nil {
		s.system = s.defaultSystemPrompt
	}
	s.titled.Store(cfg.Stored != nil && cfg.Stored.State.Title != "")
	s.gate = cfg.Permission
	if s.gate == nil {
		s.policy = permission.NewPolicy(cfg.Mode, cfg.Asker)
		s.gate = s.policy
	}
	// A layer of its own only when something goes into it (MCP tools): a
	// child or a session without MCP servers sees the tools it was given.
	s.reg = cfg.Tools
	if s.reg == nil || cfg.ConnectMCP != nil {
		s.reg = tools.NewRegistry(cfg.Tools)
	}
	s.env = &tools.Env{Workspace: ws, FS: fs, Runner: cfg.Runner, Permission: s.gate}
	if cfg.ConnectMCP != nil {
		s.closeMCP, s.warnings = cfg.ConnectMCP(ctx, s.reg)
	}
	s.tasks = s.newTasks(cfg.Tasks, log)
	var ts agent.ToolSet = taskTools{ts: s.reg, set: s.tasks}
	if cfg.Delegation != nil {
		ts = cfg.Delegation.Attach(s, ts)
	}
	s.offered = ts

	opts := agent.Options{
		ID:              cfg.ID,
		Model:           cfg.Model,
		ModelID:         cfg.ModelID,
		MaxTokens:       cfg.MaxTokens,
		ContextWindow:   cfg.ContextWindow,
		MaxTurnRequests: cfg.MaxTurnRequests,
		Meter:           cfg.Meter,
		TurnLimits:      cfg.TurnLimits,
		Thinking:        cfg.Thinking,
		System:          s.turnSystem,
		CompactPrompt:   compactTemplate(),
		Tools:           ts,
		Env:             s.env,
		History:         cfg.History,
		ContextUsed:     cfg.ContextUsed,
		Registry:        cfg.Registry,
		Notices:         s.notices,
		Logger:          log,
	}
	if s.stored != nil {
		opts.OnMessage = func(m llm.Message) { s.record(KindMessage, m) }
		opts.OnReset = func(msgs []llm.Message) { s.record(KindReset, msgs) }
	}
	s.agent = agent.New(opts)
	// What a child inherits is the session as built, not the caller's
	// config: the same workspace, and no conversation or journal.
	s.cfg.workspace, s.cfg.fs = ws, fs
	s.cfg.History, s.cfg.ContextUsed = agent.History{}, 0
	s.cfg.Stored = nil
	return s, nil
}

// turnSystem is the agent's system prompt source: the start of a turn.
func (s *Session) turnSystem(ctx context.Context) (string, error) {
	if s.cfg.TurnStarting != nil {
		s.cfg.TurnStarting()
	}
	return s.system(ctx)
}

// record appends a record to the journal (see [Session.recorded]).
func (s *Session) record(kind string, data any) {
	_ = s.recorded(s.stored.journal.Append(kind, data))
}

// ChildConfig is the configuration a subagent child of s starts from: s's
// workspace (not resolved again), file system (as built), runner, model
// and thinking setting (the agent's current ones), limits, tool set (s's, its MCP tools
// included), MCP entries, registry, clock and logger, with s's permission
// gate as the child's. It has no id, conversation, journal, system prompt,
// turn hook, meter or delegation of its own, and connects no MCP server:
// the provider sets what differs. Its turns are bounded only through its
// meter, whose ancestors are the delegating turn's.
func (s *Session) ChildConfig() Config {
	c := s.cfg
	c.ID = ""
	c.ModelID = s.agent.ModelID()
	c.Thinking = s.agent.Thinking()
	c.Tools = s.reg
	c.FS, c.ConnectMCP = nil, nil
	c.Permission, c.Mode, c.Asker = s.gate, "", nil
	c.System, c.TurnStarting = nil, nil
	c.Delegation = nil
	c.Tasks.Restore = nil
	c.Meter, c.TurnLimits = nil, budget.Limits{}
	c.endingTurn = nil
	return c
}
