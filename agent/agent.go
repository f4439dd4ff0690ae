// This file implements the Agent and its turn loop.

package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
)

// ErrBusy is returned by Prompt when a turn is already running.
var ErrBusy = errors.New("agent: a turn is already running")

// ErrNotRunning is returned by Steer when no turn is running.
var ErrNotRunning = errors.New("agent: no turn is running")

// ToolSet is where an agent finds its tools. *tools.Registry implements
// it; a subagent child gets a filtered one.
type ToolSet interface {
	Tools() []tools.Tool
	Get(name string) (tools.Tool, bool)
}

// Options configure an Agent. The zero value of each field is a usable
// default unless the field says otherwise.
type Options struct {
	// ID identifies the agent in the Registry; required.
	ID string
	// Model is the backend; required. ModelID is the model to ask for.
	Model   llm.Model
	ModelID string
	// MaxTokens caps each model call's output; 0 leaves it to the backend.
	MaxTokens int
	// Thinking, when set, turns the model's thinking on or off in every
	// call (llm.Request.Thinking); nil leaves it to the backend.
	Thinking *bool
	// ContextWindow is the model's context size in tokens (default 128000).
	ContextWindow int
	// MaxTurnRequests caps the model calls of one turn (default 100).
	MaxTurnRequests int
	// Meter counts everything the agent spends, over its whole life, with
	// what its subagents spend: a subagent run's meter, or a session's that
	// an ACP parent bounded. Each turn charges a child of it, which the
	// turn's tool calls get (tools.Call.Meter). Nil: a new unbounded one.
	Meter *budget.Meter
	// TurnLimits bound each turn with everything its subagents spend
	// (--max-tokens-per-turn); zero fields are unbounded.
	TurnLimits budget.Limits
	// MaxParallelTools caps how many tool calls of one response run at
	// once (default 256).
	MaxParallelTools int
	// System returns the system prompt for a turn. It runs at the start of
	// every turn; an error ends only that turn. Nil means no system prompt.
	System func(ctx context.Context) (string, error)
	// CompactPrompt is the instruction used to summarise older turns when
	// the conversation outgrows the context window.
	CompactPrompt string
	// Tools is the agent's tool set; nil means no tools.
	Tools ToolSet
	// Env is the environment the tools run in.
	Env *tools.Env
	// History is the conversation so far (a fork's shared prefix, or a
	// loaded session's messages).
	History History
	// ContextUsed is the tokens in context after the last model call of
	// History, when known (a reopened session's last reported usage);
	// ContextUsed returns it until the next model call.
	ContextUsed int64
	// Registry, when set, lists the agent while it is open.
	Registry *Registry
	// OnMessage, when set, is called with every message the agent appends
	// to its history, in order, so a session can journal it.
	OnMessage func(llm.Message)
	// OnReset, when set, is called with the whole new history after a
	// compaction replaced the old one.
	OnReset func([]llm.Message)
	// Notices, when set, is asked before each model call (and before a
	// turn's prompt) for news that arrived from outside the conversation:
	// background tasks that settled. It must be cheap when there is none.
	Notices func() []Notice
	Logger  *slog.Logger
}

// Notice is news the model gets between its steps from outside the
// conversation (a background task settled). The agent adds it to the
// history as a user message before its next model call and shows it to
// the editor as a completed tool call of its own.
type Notice struct {
	// Text is what the model reads.
	Text string
	// Title is the title of the tool call that shows it.
	Title string
	// RawOutput is that tool call's rawOutput.
	RawOutput any
}

// NoticeToolName is the name of the tool call a notice is shown as.
const NoticeToolName = "task_notice"

// Input is the user's message for one turn.
type Input struct {
	Text   string
	Images []llm.Image
	// Model, when set, is the model this turn asks for (a slash command's
	// model); the agent's model is unchanged.
	Model string
	// Tools, when set, are the only tools this turn offers and runs (a
	// slash command's allowed-tools).
	Tools []string
}

// Result is the outcome of a turn that did not fail.
type Result struct {
	StopReason StopReason
	// Usage is the token usage of this turn's model calls and of every
	// subagent its tool calls ran, wherever they ran.
	Usage llm.Usage
	// Exhausted, when set, is the budget that ran out and stopped the turn
	// (the stop reason is then StopMaxTokens, or StopMaxTurnRequests for a
	// bound on round trips).
	Exhausted *budget.ExhaustedError
	// LastMessage is a copy of the turn's last assistant message with
	// non-empty content; nil when there was none.
	LastMessage *llm.Message
	// Streamed is all the answer text streamed during the turn.
	Streamed string
}

// Agent is one conversation with a model and tools. It runs one turn at a
// time; its methods are safe for concurrent use.
type Agent struct {
	id     string
	opts   Options
	log    *slog.Logger
	idBase string
	seq    atomic.Uint64

	running atomic.Bool

	mu        sync.Mutex
	hist      History
	turnStart int // index of the running turn's user message; -1 when idle
	modelID   string
	thinking  *bool
	steer     []string
	meter     *budget.Meter
	lastUsed  int64 // tokens in context after the last model call
	closed    bool
}

// New returns an agent. It panics if Options lack an ID or a Model, which
// is a programming error.
func New(opts Options) *Agent {
	if opts.ID == "" || opts.Model == nil {
		panic("agent: Options.ID and Options.Model are required")
	}
	if opts.ContextWindow <= 0 {
		opts.ContextWindow = 128000
	}
	if opts.MaxTurnRequests <= 0 {
		opts.MaxTurnRequests = 100
	}
	if opts.MaxParallelTools <= 0 {
		opts.MaxParallelTools = 256
	}
	if opts.CompactPrompt == "" {
		opts.CompactPrompt = defaultCompactPrompt
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	a := &Agent{
		id:        opts.ID,
		opts:      opts,
		log:       log.With("agent", opts.ID),
		idBase:    hex.EncodeToString(b[:]),
		hist:      opts.History,
		turnStart: -1,
		modelID:   opts.ModelID,
		meter:     opts.Meter,
		thinking:  opts.Thinking,
		lastUsed:  max(opts.ContextUsed, 0),
	}
	if a.meter == nil {
		a.meter = budget.New(budget.Limits{})
	}
	a.opts.History = History{}
	if opts.Registry != nil {
		opts.Registry.add(a)
	}
	return a
}

// ID returns the agent's id.
func (a *Agent) ID() string { return a.id }

// Close removes the agent from its registry. A running turn is not
// stopped: cancel its context first.
func (a *Agent) Close() {
	a.mu.Lock()
	closed := a.closed
	a.closed = true
	a.mu.Unlock()
	if !closed && a.opts.Registry != nil {
		a.opts.Registry.remove(a)
	}
}

// ModelID returns the model the agent asks for.
func (a *Agent) ModelID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.modelID
}

// SetModelID changes the model used from the next model call on.
func (a *Agent) SetModelID(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.modelID = id
}

// Thinking returns the thinking setting of the model calls: nil when it
// is the backend's.
func (a *Agent) Thinking() *bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.thinking
}

// SetThinking turns the model's thinking on or off from the next model
// call on; nil returns it to the backend's setting.
func (a *Agent) SetThinking(on *bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.thinking = on
}

// MaxTokens returns the per-call output cap.
func (a *Agent) MaxTokens() int { return a.opts.MaxTokens }

// ContextWindow returns the context size the agent assumes.
func (a *Agent) ContextWindow() int { return a.opts.ContextWindow }

// Running reports whether a turn is running.
func (a *Agent) Running() bool { return a.running.Load() }

// Usage returns the agent's accumulated token usage, its subagents'
// included.
func (a *Agent) Usage() llm.Usage { return a.meter.Usage() }

// Meter returns the meter the agent's turns charge (Options.Meter): work
// the agent starts outside a turn charges it, or a child of it.
func (a *Agent) Meter() *budget.Meter { return a.meter }

// ContextUsed returns the tokens in context after the last model call.
func (a *Agent) ContextUsed() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastUsed
}

// History returns the whole conversation. The returned value shares
// storage with the agent but can never change what the agent holds.
func (a *Agent) History() History {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hist.Prefix(a.hist.Len())
}

// CompletedHistory returns the conversation's completed turns: all of it
// when idle, everything before the running turn's user message otherwise.
// It costs O(1) in the history's length; a forked child starts from it.
func (a *Agent) CompletedHistory() History {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.hist.Len()
	if a.turnStart >= 0 {
		n = a.turnStart
	}
	return a.hist.Prefix(n)
}

// LastAssistantMessage returns a copy of the last assistant message with
// non-empty content.
func (a *Agent) LastAssistantMessage() (llm.Message, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := a.hist.Len() - 1; i >= 0; i-- {
		m := a.hist.At(i)
		if m.Role == llm.RoleAssistant && m.Content != "" {
			return m.Clone(), true
		}
	}
	return llm.Message{}, false
}

// Steer queues a user message for the running turn; the model sees it
// before its next call.
func (a *Agent) Steer(text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.running.Load() {
		return ErrNotRunning
	}
	a.steer = append(a.steer, text)
	return nil
}

// newID mints an id unique to this agent's lifetime and, with its random
// base, unique across agents of a session.
func (a *Agent) newID(prefix string) string {
	return prefix + a.idBase + "_" + strconv.FormatUint(a.seq.Add(1), 10)
}

func (a *Agent) appendMsgs(msgs ...llm.Message) {
	a.mu.Lock()
	a.hist.Append(msgs...)
	a.mu.Unlock()
	if a.opts.OnMessage != nil {
		for _, m := range msgs {
			a.opts.OnMessage(m)
		}
	}
}

// Prompt runs one turn: the user's input, then model calls and tool calls
// until a stop reason. emit receives the turn's events in order; the
// agent serialises its calls, so emit needs no locking of its own.
//
// A cancelled ctx ends the turn with StopCancelled and a nil error, after
// every event of the turn was emitted. A non-nil error means the turn
// failed (the model backend failed, the system prompt could not be
// rendered, a tool panicked); the agent stays usable for the next turn.
func (a *Agent) Prompt(ctx context.Context, in Input, emit func(Event)) (Result, error) {
	if !a.running.CompareAndSwap(false, true) {
		return Result{}, ErrBusy
	}
	defer a.running.Store(false)
	var emitMu sync.Mutex
	send := func(e Event) {
		emitMu.Lock()
		defer emitMu.Unlock()
		emit(e)
	}

	t := &turn{a: a, ctx: ctx, emit: send, model: in.Model, only: in.Tools, meter: a.meter.Child(a.opts.TurnLimits)}
	defer func() {
		a.mu.Lock()
		a.turnStart = -1
		a.steer = nil
		a.mu.Unlock()
	}()
	return t.run(in)
}

// turn is the state of one running Prompt.
type turn struct {
	a    *Agent
	ctx  context.Context
	emit func(Event)
	// meter counts the turn and everything its tool calls delegate;
	// reported is its count on the last usage event.
	meter    *budget.Meter
	reported llm.Usage
	streamed []byte
	last     *llm.Message
	system   string
	// model and only are the turn's own model and tools (Input).
	model string
	only  []string
}

// offers reports whether the turn offers the tool name.
func (t *turn) offers(name string) bool { return t.only == nil || slices.Contains(t.only, name) }

func (t *turn) run(in Input) (Result, error) {
	a := t.a
	if a.opts.System != nil {
		sys, err := a.opts.System(t.ctx)
		if err != nil {
			if t.ctx.Err() != nil {
				return t.result(StopCancelled), nil
			}
			return Result{}, fmt.Errorf("agent: system prompt: %w", err)
		}
		t.system = sys
	}
	if t.ctx.Err() != nil {
		return t.result(StopCancelled), nil
	}

	a.mu.Lock()
	a.turnStart = a.hist.Len()
	a.mu.Unlock()
	// What settled while no turn ran comes before the prompt, as it came.
	t.takeNotices()
	a.appendMsgs(llm.Message{Role: llm.RoleUser, Content: in.Text, Images: in.Images})

	for calls := 0; ; calls++ {
		if t.ctx.Err() != nil {
			return t.result(StopCancelled), nil
		}
		if calls >= a.opts.MaxTurnRequests {
			return t.result(StopMaxTurnRequests), nil
		}
		if err := t.meter.Begin(); err != nil {
			return t.exhausted(err), nil
		}
		t.takeSteering()
		t.takeNotices()
		if err := t.maybeCompact(); err != nil {
			if t.ctx.Err() != nil {
				return t.result(StopCancelled), nil
			}
			return Result{}, err
		}

		msg, finish, err := t.callModel()
		if err != nil {
			if t.ctx.Err() != nil {
				// Keep what was said before the cancel, without tool calls
				// that will never get answers.
				msg.ToolCalls = nil
				if msg.Content != "" || msg.Reasoning != nil {
					a.appendMsgs(msg)
				}
				return t.result(StopCancelled), nil
			}
			return Result{}, err
		}

		switch finish {
		case llm.FinishContentFilter:
			// A refused prompt and everything after it leaves the context
			// (ACP: the UI should reflect that it is gone).
			a.mu.Lock()
			a.hist.truncate(a.turnStart)
			a.mu.Unlock()
			return t.result(StopRefusal), nil
		case llm.FinishLength:
			msg.ToolCalls = nil // arguments cut short; never run them
			a.appendMsgs(msg)
			t.noteLast(msg)
			return t.result(StopMaxTokens), nil
		}

		a.appendMsgs(msg)
		t.noteLast(msg)
		if len(msg.ToolCalls) == 0 {
			return t.result(StopEndTurn), nil
		}
		results, err := t.runTools(msg.ToolCalls)
		a.appendMsgs(results...)
		if err != nil {
			return Result{}, err
		}
		t.reportDelegated()
		if t.ctx.Err() != nil {
			return t.result(StopCancelled), nil
		}
	}
}

func (t *turn) noteLast(m llm.Message) {
	if m.Content != "" {
		c := m.Clone()
		t.last = &c
	}
}

func (t *turn) result(r StopReason) Result {
	return Result{StopReason: r, Usage: t.meter.Usage(), LastMessage: t.last, Streamed: string(t.streamed)}
}

// reportDelegated emits a usage event when the turn's count grew since
// the last one without a model call of its own: the subagents its tool
// calls ran spent it. The editor's totals, and a parent dshd charging
// this turn to a budget, learn of it now rather than after the next call
// (which a spent budget may refuse).
func (t *turn) reportDelegated() {
	u := t.meter.Usage()
	if u == t.reported {
		return
	}
	t.reported = u
	a := t.a
	a.mu.Lock()
	used := a.lastUsed
	a.mu.Unlock()
	t.emit(UsageUpdated{Used: used, Size: int64(a.opts.ContextWindow), Turn: u})
}

// exhausted ends a turn whose budget, or an ancestor's, ran out before
// its next model call.
func (t *turn) exhausted(err error) Result {
	ex, _ := err.(*budget.ExhaustedError)
	stop := StopMaxTokens
	if ex != nil && ex.Turns {
		stop = StopMaxTurnRequests
	}
	t.a.log.Info("the turn stopped: its budget ran out", "err", err)
	r := t.result(stop)
	r.Exhausted = ex
	return r
}

func (t *turn) takeSteering() {
	a := t.a
	a.mu.Lock()
	queued := a.steer
	a.steer = nil
	a.mu.Unlock()
	for _, s := range queued {
		a.appendMsgs(llm.Message{Role: llm.RoleUser, Content: s})
	}
}

// takeNotices adds the notices that arrived since the last model call:
// each is a user message for the model and a completed tool call for the
// editor.
func (t *turn) takeNotices() {
	a := t.a
	if a.opts.Notices == nil {
		return
	}
	for _, n := range a.opts.Notices() {
		id := a.newID("tc")
		t.emit(ToolCallStarted{ID: id, Name: NoticeToolName, Title: n.Title, Kind: tools.KindOther})
		t.emit(ToolCallUpdated{ID: id, Status: ToolCompleted, Content: []tools.Content{tools.TextContent(n.Text)}, RawOutput: n.RawOutput})
		a.appendMsgs(llm.Message{Role: llm.RoleUser, Content: n.Text})
	}
}

// request builds the model request from the system prompt and history.
func (t *turn) request() *llm.Request {
	a := t.a
	a.mu.Lock()
	msgs := a.hist.Messages()
	model := a.modelID
	thinking := a.thinking
	a.mu.Unlock()
	if t.model != "" {
		model = t.model
	}
	req := &llm.Request{Model: model, System: t.system, Messages: msgs, MaxTokens: a.opts.MaxTokens, Thinking: thinking}
	if a.opts.Tools != nil {
		all := a.opts.Tools.Tools()
		for _, tl := range all {
			if !t.offers(tl.Name()) {
				continue
			}
			if req.Tools == nil { // sized once, not grown per tool; still nil when none is offered
				req.Tools = make([]llm.ToolSpec, 0, len(all))
			}
			req.Tools = append(req.Tools, llm.ToolSpec{Name: tl.Name(), Description: tl.Description(), Parameters: tl.InputSchema()})
		}
	}
	return req
}

// callModel streams one model call, emitting chunks as they arrive, and
// returns the assistant message. On error the message holds what arrived.
func (t *turn) callModel() (llm.Message, llm.FinishReason, error) {
	a := t.a
	// The loop body is a closure handed to the model's iterator, so every
	// local it assigns is moved to the heap; kept in one struct they cost
	// one allocation per call instead of one each.
	var st struct {
		msg                    llm.Message
		text, reasoning        []byte
		sawReasoning, sawUsage bool
		msgID, thoughtID       string
		usage                  llm.Usage
		finish                 llm.FinishReason
		err                    error
	}
	st.msg.Role = llm.RoleAssistant

	for ev, err := range a.opts.Model.Stream(t.ctx, t.request()) {
		if err != nil {
			st.err = err
			break
		}
		switch ev.Kind {
		case llm.EventText:
			if ev.Text == "" {
				continue
			}
			if st.msgID == "" {
				st.msgID = a.newID("m")
			}
			st.text = append(st.text, ev.Text...)
			t.streamed = append(t.streamed, ev.Text...)
			t.emit(MessageChunk{MessageID: st.msgID, Text: ev.Text})
		case llm.EventReasoning:
			st.sawReasoning = true
			if ev.Text == "" {
				continue
			}
			if st.thoughtID == "" {
				st.thoughtID = a.newID("r")
			}
			st.reasoning = append(st.reasoning, ev.Text...)
			t.emit(ThoughtChunk{MessageID: st.thoughtID, Text: ev.Text})
		case llm.EventToolCall:
			st.msg.ToolCalls = append(st.msg.ToolCalls, *ev.ToolCall)
		case llm.EventUsage:
			st.usage.Add(*ev.Usage)
			st.sawUsage = true
		case llm.EventFinish:
			st.finish = ev.Finish
		}
	}
	msg, usage, finish, streamErr := st.msg, st.usage, st.finish, st.err
	msg.Content = string(st.text)
	if st.sawReasoning {
		r := string(st.reasoning)
		msg.Reasoning = &r
	}
	if streamErr == nil && finish == "" {
		streamErr = llm.ErrTruncated
	}
	if st.sawUsage {
		t.meter.Charge(usage)
		a.mu.Lock()
		a.lastUsed = usage.InputTokens + usage.OutputTokens
		used := a.lastUsed
		a.mu.Unlock()
		t.reported = t.meter.Usage()
		t.emit(UsageUpdated{Used: used, Size: int64(a.opts.ContextWindow), Call: usage, Turn: t.reported})
	}
	if streamErr != nil {
		if t.ctx.Err() == nil {
			streamErr = fmt.Errorf("agent: model call failed: %w", streamErr)
		}
		return msg, "", streamErr
	}
	return msg, finish, nil
}
