// This file implements a run: one prompt turn of a child, its result,
// Cancel, Dispose and Resume.

package acpprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/within"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
)

// run is one prompt turn of a child.
type run struct {
	*runkit.Run // its end, Wait and the once-only part of Dispose

	c        *child
	text     string
	ctx      context.Context // the prompt call's; cancelled to stop waiting
	stopCall context.CancelFunc
	progress *progressSink // nil when exposed or nobody listens

	// schemaErr is why the last answer did not match the output schema;
	// perPrompt, that the last usage came from the prompt's response.
	// Both are written and read by the turn goroutine only.
	schemaErr error
	perPrompt bool

	cancelled  atomic.Bool
	timedOut   atomic.Bool
	spent      atomic.Bool // the parent stopped the agent: a budget ran out
	cancelOnce sync.Once

	mu    sync.Mutex
	grace *time.Timer   // guarded by mu
	msgID acp.MessageID // the message being collected; guarded by mu
	cur   []byte        // its text, up to MaxOutputBytes; guarded by mu
	prev  []byte        // the last earlier message with text; guarded by mu
	// curCut and prevCut count the bytes of cur's and prev's messages
	// past MaxOutputBytes, not kept; loggedCut is set once one was cut.
	curCut, prevCut int        // guarded by mu
	loggedCut       bool       // guarded by mu
	toolSeen        bool       // a tool call came after cur began; guarded by mu
	usage           usageTally // what the agent's usage_updates said; guarded by mu
	// queued are the steering messages waiting for the agent to answer
	// its current prompt; shut is set once the run takes no more.
	queued []string // guarded by mu
	shut   bool     // guarded by mu
}

var (
	_ subagents.Run       = (*run)(nil)
	_ subagents.Resumable = (*run)(nil)
	_ subagents.Steerable = (*run)(nil)
	_ subagents.Durable   = (*run)(nil)
)

func (c *child) newRun(text string, progress func(subagents.Progress)) *run {
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{Run: runkit.NewRun(), c: c, text: text, ctx: ctx, stopCall: cancel}
	if c.expose == nil && progress != nil {
		r.progress = runkit.NewProgressSink(progress, c.interval, foldUpdate)
	}
	return r
}

// begin makes r the child's current run, marks it running and starts the
// turn.
func (r *run) begin() {
	c := r.c
	r.usage.before = c.used.Load()
	c.runs.Begin(r)
	if c.expose != nil {
		c.expose.State(c.up, subagents.State{State: subagents.StateRunning})
	}
	go r.loop()
}

// loop runs the turn and publishes its end: the idle state (exposed) or
// the final progress goes out before Wait returns.
func (r *run) loop() {
	res := r.turn()
	c := r.c
	c.grants.clear()
	if c.expose != nil {
		c.expose.State(c.up, runkit.IdleState(res))
	}
	if r.progress != nil {
		r.progress.Finish()
	}
	r.Finish(res)
}

// turn sends the prompt and waits for its answer.
func (r *run) turn() subagents.Result {
	c := r.c
	pr, sess := c.conn()
	defer r.stopCall()
	if r.cancelled.Load() {
		return r.result(subagents.StopAborted, "")
	}
	if !pr.alive() {
		return r.result(subagents.StopError, pr.endReason(time.Second))
	}
	if c.t.timeout > 0 {
		timer := time.AfterFunc(c.t.timeout, func() {
			r.timedOut.Store(true)
			r.sendCancel(pr, sess)
			r.stopCall()
		})
		defer timer.Stop()
	}
	defer r.shutQueue()
	res := r.ask(pr, sess, r.text, llm.Usage{})
	res = r.steered(pr, sess, res)
	if r.schemaErr != nil && c.meter.Exhausted() == nil {
		// One corrective turn: the child is told what is wrong with its
		// answer and asked for it again, in the same session.
		first := res.Usage
		text := runkit.Correction(r.schemaErr)
		r.schemaErr = nil
		r.newAnswer()
		if r.cancelled.Load() {
			return r.result(subagents.StopAborted, "")
		}
		r.c.log.Debug("the answer does not match the output schema; one corrective turn")
		if c.expose != nil {
			c.expose.Message(c.parent.SessionID, c.up, text)
		}
		res = r.ask(pr, sess, text, first)
		if r.schemaErr != nil {
			res.Diagnostic = runkit.Cut("the child's final answer does not match the output schema, also after it was told why: "+r.schemaErr.Error(), runkit.MaxDiagnostic)
		}
	}
	return res
}

// steered sends the messages queued while the agent answered a prompt
// as its next prompt, for as long as there are any (ACP has no steering
// of its own: a message waits for the agent's current turn to end). The
// run's result is the answer to the last.
func (r *run) steered(pr *peer, sess acp.SessionID, res subagents.Result) subagents.Result {
	for (res.StopReason == subagents.StopCompleted || r.schemaErr != nil) && r.c.meter.Exhausted() == nil {
		r.mu.Lock()
		next := strings.Join(r.queued, "\n\n")
		r.queued = nil
		if next == "" || r.cancelled.Load() {
			r.shut = true
		}
		r.mu.Unlock()
		if next == "" || r.cancelled.Load() {
			return res
		}
		first := res.Usage
		r.schemaErr = nil
		r.newAnswer()
		r.c.log.Debug("sending the steering messages as the next prompt")
		res = r.ask(pr, sess, next+answerFormat(r.c.schemaRaw), first)
	}
	r.shutQueue()
	return res
}

// shutQueue makes the run take no more steering messages.
func (r *run) shutQueue() {
	r.mu.Lock()
	r.shut = true
	r.mu.Unlock()
}

// SendMessage steers the running child. An ACP agent takes one prompt at
// a time and no messages in between, so the text is queued and sent as
// the session's next prompt once the agent has answered its current one;
// the run ends with the answer to the last.
func (r *run) SendMessage(_ context.Context, text string) error {
	r.mu.Lock()
	if r.shut || r.Ended() {
		r.mu.Unlock()
		return runkit.ErrEnded
	}
	r.queued = append(r.queued, text)
	r.mu.Unlock()
	if c := r.c; c.expose != nil {
		c.expose.Message(c.parent.SessionID, c.up, text)
	}
	return nil
}

// snapshot is what a Durable run of this provider saves: the child's
// session on its agent, what the agent can do to continue it, and the
// editor's id for it.
type snapshot struct {
	Session acp.SessionID `json:"session"`
	Up      string        `json:"up,omitempty"`
	Cwd     string        `json:"cwd,omitempty"`
	Resume  bool          `json:"resume,omitempty"`
	Load    bool          `json:"load,omitempty"`
}

// Snapshot is what Restore needs to continue the child's session on its
// agent once this connection (or this daemon) is gone.
func (r *run) Snapshot() (json.RawMessage, error) {
	c := r.c
	pr, sess := c.conn()
	snap := snapshot{Session: sess, Up: c.up, Cwd: c.cwd}
	if pr.init != nil {
		snap.Resume = pr.init.AgentCapabilities.SessionCapabilities.Resume != nil
		snap.Load = pr.init.AgentCapabilities.LoadSession
	}
	return json.Marshal(snap)
}

// ask sends text as one prompt of the turn and charges its usage: earlier
// is the usage of the turn's prompts before it, added in when the answer's
// usage is that prompt's alone (the tally of usage_updates already covers
// the whole run).
func (r *run) ask(pr *peer, sess acp.SessionID, text string, earlier llm.Usage) subagents.Result {
	res := r.prompt(pr, sess, text)
	if r.perPrompt {
		res.Usage.Add(earlier)
	}
	r.settle(res.Usage)
	r.outOfBudget(&res)
	return res
}

// newAnswer forgets the answer so far, before a prompt that asks for
// another.
func (r *run) newAnswer() {
	r.mu.Lock()
	r.cur, r.prev, r.msgID, r.toolSeen = nil, nil, "", false
	r.mu.Unlock()
}

// prompt sends one session/prompt and maps its answer.
func (r *run) prompt(pr *peer, sess acp.SessionID, text string) subagents.Result {
	c := r.c
	raw, err := pr.conn.Call(r.ctx, acp.MethodSessionPrompt, &acp.PromptRequest{
		SessionID: sess,
		Prompt:    []acp.ContentBlock{acp.TextBlock(text)},
	})
	if err != nil && c.t.network == "remote" && r.dropped(pr, err) {
		// A remote connection that drops mid-run is retried once: the
		// session is reattached (or, on a fleet whose endpoint is gone,
		// opened on another) and the prompt sent again.
		c.log.Warn("the connection dropped during the run; reattaching", "agent", c.t.where(), "err", err)
		// The pool hands out the old connection until its watcher has
		// seen it end.
		pr.conn.Close()
		within.Closed(pr.dead, 2*time.Second)
		if rerr := c.reattach(r.ctx); rerr != nil {
			c.log.Warn("reattaching failed", "agent", c.t.where(), "err", rerr)
			r.mu.Lock()
			if r.grace != nil {
				r.grace.Stop()
			}
			r.mu.Unlock()
			return r.result(subagents.StopError, fmt.Sprintf("the connection to the agent at %s dropped during the run and could not be reattached: %v", c.t.where(), rerr))
		}
		pr, sess = c.conn()
		raw, err = pr.conn.Call(r.ctx, acp.MethodSessionPrompt, &acp.PromptRequest{
			SessionID: sess,
			Prompt:    []acp.ContentBlock{acp.TextBlock(text)},
		})
	}
	r.mu.Lock()
	if r.grace != nil {
		r.grace.Stop()
	}
	r.mu.Unlock()
	r.perPrompt = false
	res := r.outcome(pr, raw, err)
	r.mu.Lock()
	if res.Usage == (llm.Usage{}) {
		// A prompt that failed has no answer to count from.
		res.Usage = r.usage.total()
	}
	r.usage.endPrompt()
	r.mu.Unlock()
	return res
}

// outcome maps the prompt's answer or failure onto a Result.
func (r *run) outcome(pr *peer, raw json.RawMessage, err error) subagents.Result {
	c := r.c
	if err != nil {
		var ae *acp.Error
		switch {
		case r.timedOut.Load():
			return r.result(subagents.StopError, fmt.Sprintf("the agent timed out after %s without finishing the task", c.t.timeout))
		case r.cancelled.Load():
			return r.result(subagents.StopAborted, "")
		case errors.Is(err, acp.ErrConnClosed) || !pr.alive():
			c.lost()
			return r.result(subagents.StopError, pr.endReason(2*time.Second))
		case errors.As(err, &ae):
			return r.result(subagents.StopError, "the agent failed the task: "+wireMessage(err))
		case errors.Is(err, context.Canceled):
			return r.result(subagents.StopAborted, "")
		}
		return r.result(subagents.StopError, "the prompt failed: "+runkit.Cut(scrub(err.Error()), 512))
	}
	var resp promptResult
	if err := json.Unmarshal(raw, &resp); err != nil {
		return r.result(subagents.StopError, "the agent's answer to session/prompt is malformed")
	}
	stop, diag := stopOf(resp.StopReason)
	switch {
	case stop == subagents.StopCompleted:
	case r.timedOut.Load():
		// The agent answered the cancel sent when time ran out.
		stop, diag = subagents.StopError, fmt.Sprintf("the agent timed out after %s without finishing the task", c.t.timeout)
	case r.cancelled.Load():
		stop, diag = subagents.StopAborted, ""
	}
	res := r.result(stop, diag)
	res.Usage = usageOf(resp.Usage)
	r.perPrompt = resp.Usage != nil
	r.mu.Lock()
	if resp.Usage == nil {
		res.Usage = r.usage.total()
	}
	if r.usage.sawUsed {
		c.used.Store(r.usage.lastUsed)
	}
	r.mu.Unlock()
	if stop == subagents.StopCompleted && c.schema != nil {
		s, err := runkit.Structured(c.schema, res.Output)
		if err != nil {
			r.schemaErr = err
			res.StopReason = subagents.StopError
			res.Diagnostic = runkit.Cut("the child's final answer does not match the output schema: "+err.Error(), runkit.MaxDiagnostic)
		} else {
			res.Structured = s
		}
	}
	return res
}

// dropped reports whether a failed prompt call means the connection went
// away under a run nobody stopped.
func (r *run) dropped(pr *peer, err error) bool {
	if r.cancelled.Load() || r.timedOut.Load() || r.ctx.Err() != nil {
		return false
	}
	return errors.Is(err, acp.ErrConnClosed) || !pr.alive()
}

// result is a Result with the child's output so far.
func (r *run) result(stop subagents.StopReason, diag string) subagents.Result {
	res := subagents.Result{StopReason: stop, Diagnostic: runkit.Cut(diag, runkit.MaxDiagnostic), Output: r.output(), ChildSessionID: r.c.up}
	if res.Output != "" {
		res.LastMessage = &llm.Message{Role: llm.RoleAssistant, Content: res.Output}
	}
	return res
}

// lost reports the agent's relayed children as no longer observable.
func (c *child) lost() {
	if c.expose == nil {
		return
	}
	c.mu.Lock()
	pr := c.peer
	var gone []*route
	for _, rt := range c.routes {
		if rt.parent != nil {
			gone = append(gone, rt)
		}
	}
	c.mu.Unlock()
	pr.lostRoutes(gone)
}

// observe collects the child's message text and feeds the progress view.
// Messages are told apart by messageId or, without ids, by a tool call in
// between; the output is the last one with text.
func (r *run) observe(u acp.SessionUpdate) {
	switch u := u.(type) {
	case *acp.AgentMessageChunk:
		if t, ok := u.Content.(*acp.TextContent); ok && t.Text != "" {
			r.mu.Lock()
			fresh := len(r.cur) == 0
			if u.MessageID != r.msgID || r.toolSeen {
				if len(r.cur) > 0 {
					r.prev, r.prevCut = r.cur, r.curCut
				}
				r.cur, r.curCut, r.msgID, r.toolSeen, fresh = nil, 0, u.MessageID, false, true
			}
			r.keep(t.Text)
			r.mu.Unlock()
			if r.c.activity != nil {
				r.c.activity(subagents.Activity{Text: t.Text, NewMessage: fresh})
			}
		}
	case *acp.ToolCall:
		r.mu.Lock()
		r.toolSeen = len(r.cur) > 0
		r.mu.Unlock()
		if r.c.activity != nil {
			r.c.activity(subagents.Activity{Tool: u.Title})
		}
	case *acp.UsageUpdate:
		r.mu.Lock()
		news := r.usage.add(u)
		r.mu.Unlock()
		r.charge(news)
	}
	if r.progress != nil {
		r.progress.Observe(u)
	}
}

// keep appends text to cur up to MaxOutputBytes and counts the rest: an
// agent that streams one message without end costs the parent a bounded
// amount of memory, and the model a bounded tool result. r.mu is held.
func (r *run) keep(text string) {
	limit := r.c.p.o.MaxOutputBytes
	room := limit - len(r.cur)
	if r.curCut == 0 && len(text) <= room {
		r.cur = append(r.cur, text...)
		return
	}
	k := max(0, min(room, len(text)))
	if r.curCut > 0 {
		k = 0
	}
	for k > 0 && !utf8.RuneStart(text[k]) {
		k-- // never half a character
	}
	r.cur = append(r.cur, text[:k]...)
	r.curCut += len(text) - k
	if !r.loggedCut {
		r.loggedCut = true
		r.c.log.Warn("the agent's answer is over the output limit; keeping its start", "setting", r.c.p.o.Settings.MaxOutputBytes, "limit", limit)
	}
}

func (r *run) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	text, cut := r.cur, r.curCut
	if len(text) == 0 {
		text, cut = r.prev, r.prevCut
	}
	if cut == 0 {
		return string(text)
	}
	return fmt.Sprintf("%s\n\n[the rest of this answer (%d bytes) was not kept: the agent's answer is over dshd's limit of %d bytes (%s)]", text, cut, r.c.p.o.MaxOutputBytes, r.c.p.o.Settings.MaxOutputBytes)
}

// sendCancel sends session/cancel once.
func (r *run) sendCancel(pr *peer, sess acp.SessionID) {
	r.cancelOnce.Do(func() {
		if err := pr.conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sess}); err != nil {
			r.c.log.Debug("session/cancel not sent", "err", err)
		}
	})
}

// ID returns the run's id.
func (r *run) ID() string { return r.c.id }

// Cancel sends session/cancel; the agent cancels its turn and everything
// below it, and the run ends aborted. An agent that does not answer
// within CancelGrace is no longer waited for.
func (r *run) Cancel() {
	r.cancelled.Store(true)
	if r.Ended() {
		return
	}
	r.stop()
}

// stop asks the agent to cancel its turn (session/cancel) and, past
// CancelGrace, stops waiting for its answer.
func (r *run) stop() {
	pr, sess := r.c.conn()
	r.sendCancel(pr, sess)
	r.mu.Lock()
	if r.grace == nil {
		r.grace = time.AfterFunc(r.c.p.o.CancelGrace, r.stopCall)
	}
	r.mu.Unlock()
}

// Dispose cancels what remains, waits for the turn, and closes the child
// unless a resumed run still holds it: session/close, then the process and
// its group. It is idempotent.
func (r *run) Dispose() error {
	r.DisposeOnce(r.Cancel, func() {
		r.mu.Lock()
		if r.grace != nil {
			r.grace.Stop()
		}
		r.mu.Unlock()
		r.c.release()
	})
	return nil
}

// Resume continues the finished child's conversation with prompt: another
// session/prompt on the same session, over the same connection while it
// lives, else on a new one through session/resume or session/load. When
// exposed, the child keeps its id and goes running and idle again.
func (r *run) Resume(ctx context.Context, text string) (subagents.Run, error) {
	c := r.c
	if err := c.runs.Resume(r); err != nil {
		return nil, err
	}
	if pr, _ := c.conn(); !pr.alive() {
		if err := c.reconnect(ctx); err != nil {
			c.release()
			return nil, err
		}
	}
	next := c.newRun(text+answerFormat(c.schemaRaw), nil)
	if c.expose != nil {
		c.expose.Message(c.parent.SessionID, c.up, text)
	}
	next.begin()
	return next, nil
}
