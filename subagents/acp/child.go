// This file implements Start and the child: one session on an agent that
// one or more runs (Resume) use in turn, with what the parent lends it.

package acpprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/runkit"
	"github.com/dshd/dshd/tools"
)

// _meta keys of session/new that carry the delegation depth to a child
// dshd, which enforces it (acp/server/build.go).
const (
	metaDepth    = "dshd.dev/depth"
	metaMaxDepth = "dshd.dev/maxDepth"
	// metaCheckout asks a dshd child for a session on a clone of a
	// repository.
	metaCheckout = "dshd.dev/checkout"
)

// closeTimeout bounds session/close at teardown.
const closeTimeout = 2 * time.Second

// child is one session on an agent, and what the parent lends it.
type child struct {
	p         *Provider
	id        string
	name      string
	t         *target
	parent    *subagents.Scope
	env       *tools.Env // the parent's environment; nil: nothing to lend
	expose    subagents.Exposure
	requester string // how the parent's gate labels the child's questions
	deny      bool
	cwd       string
	schema    *jsonschema.Resolved
	schemaRaw json.RawMessage
	interval  time.Duration
	log       *slog.Logger
	// activity receives what the child does in every run (nil: nobody).
	activity func(subagents.Activity)
	// meter is the run's: what the agent reports spending is charged to
	// it, and so to the delegating turn.
	meter *budget.Meter

	// ctx is the child's lifetime: its terminals and the requests it made
	// end with it.
	ctx  context.Context
	stop context.CancelFunc

	terms  terminals
	grants grants

	mu      sync.Mutex
	peer    *peer         // guarded by mu
	session acp.SessionID // the agent's id of the child's session
	up      string        // the editor's id; "" when not exposed
	routes  []*route      // every route of the child on peer; guarded by mu
	// endpoint is the fleet endpoint the child is placed on ("" off a
	// remote binding); depth, limit and model open its session again on
	// another endpoint when its own is gone.
	endpoint     string
	depth, limit int
	model        string
	// used is the context the agent reported last in a run (not after
	// setup): where the next run's growth starts.
	used atomic.Uint64

	runs runkit.Runs[*run]
}

// resolveRequest builds the target of a start or restore request's
// binding and resolves its output schema, if it has one; either failing is
// an invalid request.
func (p *Provider) resolveRequest(req subagents.StartRequest) (*target, *jsonschema.Resolved, error) {
	t, err := p.resolveTarget(req.Options)
	if err != nil {
		return nil, nil, runkit.Invalid("acp binding: %v", err)
	}
	schema, err := runkit.RequestSchema(req.OutputSchema)
	if err != nil {
		return nil, nil, err
	}
	return t, schema, nil
}

// newChild returns the child of req on t, named and numbered, with the
// parent scope's environment, exposure and permission settings.
func (p *Provider) newChild(req subagents.StartRequest, t *target, schema *jsonschema.Resolved, cwd string) *child {
	parent := req.Parent
	name := req.Name
	if name == "" {
		name = Name
	}
	id := "acp-" + strconv.FormatUint(p.seq.Add(1), 10)
	c := &child{
		p: p, id: id, name: name, t: t, parent: parent, env: parent.Env,
		expose: parent.Expose, deny: req.DenyPermissions, cwd: cwd,
		schema: schema, schemaRaw: req.OutputSchema,
		interval: p.o.ProgressInterval,
		log:      p.log.With("run", id, "agent", t.label),
		activity: req.Activity,
	}
	c.runs.Hold()
	c.requester = req.ToolCallID
	if c.requester == "" {
		c.requester = id
	}
	return c
}

// Start connects to the agent (starting it for a stdio binding), opens a
// session in the parent session's cwd and sends the task. It returns once
// the child's session exists and, when the editor sees children, is
// announced. A request it cannot serve (a bad binding, schema or cwd) is
// an error. Like a failure mid-turn, a failure to reach the agent (its
// program does not start, the handshake or session/new fails or times
// out) is not: the run returned has ended with StopError and the reason,
// and left nothing behind. A ctx that ends before or while starting gives
// a run that ended StopAborted; when it ended before, no process was
// started.
func (p *Provider) Start(ctx context.Context, req subagents.StartRequest) (subagents.Run, error) {
	parent := req.Parent
	if parent == nil {
		return nil, runkit.Invalid("a start request needs a parent scope")
	}
	depth, limit, err := subagents.AdmitChild(p, req)
	if err != nil {
		return nil, err
	}
	t, schema, err := p.resolveRequest(req)
	if err != nil {
		return nil, err
	}
	cwd := cmp.Or(t.cwd, parent.Cwd)
	if cwd == "" {
		return nil, runkit.Invalid("the parent session has no working directory")
	}
	text, err := taskText(req, cwd, time.Now())
	if err != nil {
		return nil, runkit.Invalid("%v", err)
	}
	c := p.newChild(req, t, schema, cwd)
	c.meter = subagents.RunMeter(req)
	if ctx.Err() != nil {
		return runkit.NewSettled(c.id, subagents.Result{StopReason: subagents.StopAborted}), nil
	}
	if _, err := c.meter.Remaining(); err != nil {
		// Nothing is left to spend: no agent is started for it.
		return runkit.NewSettled(c.id, subagents.Result{StopReason: subagents.StopMaxTokens, OutOfBudget: true, Diagnostic: err.Error()}), nil
	}

	startCtx, cancel := context.WithTimeout(ctx, t.startTimeout)
	defer cancel()
	c.depth, c.limit, c.model = depth, limit, req.Model
	pr, sess, err := c.open(startCtx, "")
	if err != nil {
		return c.failedStart(ctx, err), nil
	}
	c.peer, c.session = pr, sess
	c.ctx, c.stop = context.WithCancel(context.WithoutCancel(ctx))

	own := &route{c: c, down: sess}
	r := c.newRun(text, req.Progress)
	if c.expose != nil {
		up, err := c.announce(req.Description, "")
		if err != nil {
			c.stop()
			c.closeSession(pr, sess)
			p.releasePeer(pr)
			return nil, fmt.Errorf("subagents: announcing the child: %w", err)
		}
		c.up, own.up, c.requester = up, up, up
	}
	if c.expose != nil {
		c.expose.Message(parent.SessionID, c.up, req.Prompt)
	}
	c.track(own)
	// Updates the agent sent right after session/new were held until now.
	pr.addRoute(own)
	r.begin()
	return r, nil
}

// announce shows the child to the editor in the parent's session (under
// id, the one it had there, for a restored child), with its cwd when that
// is not the parent's, and returns the id the editor gave it.
func (c *child) announce(description, id string) (string, error) {
	a := subagents.Announcement{Title: c.name, Description: description, Cancel: c.runs.CancelCurrent, ID: id}
	if c.cwd != c.parent.Cwd {
		a.Cwd = c.cwd
	}
	return c.expose.Announce(c.parent.SessionID, a)
}

// failedStart is the run of a start that could not reach the agent: ended
// aborted when ctx ended meanwhile, else with StopError and the reason,
// which is also logged (a result alone could hide a broken binding).
func (c *child) failedStart(ctx context.Context, err error) subagents.Run {
	if ctx.Err() != nil {
		c.log.Debug("start cancelled", "err", err)
		return runkit.NewSettled(c.id, subagents.Result{StopReason: subagents.StopAborted})
	}
	c.log.Warn("the agent could not be started", "err", err)
	return runkit.NewSettled(c.id, subagents.Result{
		StopReason: subagents.StopError,
		Diagnostic: runkit.Cut(fmt.Sprintf("%s could not be started: %v", c.named(err), err), runkit.MaxDiagnostic),
	})
}

// named is "the agent LABEL", or "the agent" for an agent labelled by its
// address when err names the address already, as a refusal or a dial
// error does.
func (c *child) named(err error) string {
	byAddress := c.t.address != "" && (c.t.label == c.t.address || c.t.label == c.t.where())
	if byAddress && strings.Contains(err.Error(), c.t.address) {
		return "the agent"
	}
	return "the agent " + c.t.label
}

// clientCaps are the client capabilities the parent can honestly offer:
// fs and terminal only when its environment has them, subagents only when
// its editor sees children (so the agent's children can be relayed).
func (c *child) clientCaps() acp.ClientCapabilities {
	var caps acp.ClientCapabilities
	// A child on a checkout of its own uses its host's files, not ours.
	if env := c.env; env != nil && env.Workspace != nil && c.t.repo == "" {
		if env.FS != nil {
			caps.FS = acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
		}
		caps.Terminal = env.Runner != nil
	}
	if c.expose != nil {
		caps.Subagents = &acp.SubagentCapabilities{}
	}
	return caps
}

// roots are the child's workspace: its cwd, then the parent's additional
// directories when the child works in the parent's cwd (session/new
// passes them on where the agent takes them).
func (c *child) roots() []string {
	if c.t.cwd != "" {
		return []string{c.cwd}
	}
	return append([]string{c.cwd}, c.parent.AdditionalDirectories...)
}

// newSession opens the child's session: in cwd, with the depth and what
// is left of the budgets the child must enforce, the parent's roots and
// MCP servers where the binding and the agent allow, then the requested
// model.
func (c *child) newSession(ctx context.Context, pr *peer, depth, limit int, left budget.Limits, model string) (acp.SessionID, error) {
	req := &acp.NewSessionRequest{
		Cwd:        c.cwd,
		McpServers: c.mcpServers(pr),
		Meta:       acp.Meta{metaDepth: depth, metaMaxDepth: limit},
	}
	if c.t.repo != "" {
		// A dshd child clones it and works in the clone
		// (acp/server/checkout.go).
		req.Meta[metaCheckout] = map[string]any{"repo": c.t.repo, "rev": c.t.rev}
	}
	budgetMeta(req.Meta, left)
	if c.t.cwd == "" && len(c.parent.AdditionalDirectories) > 0 && pr.sessionCaps().AdditionalDirectories != nil {
		req.AdditionalDirectories = c.parent.AdditionalDirectories
	}
	resp, err := pr.conn.NewSession(ctx, req)
	if err != nil {
		return "", pr.callError(ctx, "session/new", err)
	}
	if resp.SessionID == "" {
		return "", fmt.Errorf("the agent answered session/new without a session id")
	}
	if c.t.repo != "" && !madeCheckout(resp.Meta) {
		// The agent took the session in the parent's cwd, which it would
		// work on unconfined and unseen by the parent's gate (it is
		// offered no fs/*): it does not start.
		c.closeSession(pr, resp.SessionID)
		return "", fmt.Errorf("it made no checkout of its own for the binding's repo= (only a dshd agent clones the repository; this one would work in the parent's cwd %s instead)", c.cwd)
	}
	if model == "" {
		return resp.SessionID, nil
	}
	if err := setModel(ctx, pr, resp.SessionID, resp.ConfigOptions, model); err != nil {
		c.closeSession(pr, resp.SessionID)
		return "", err
	}
	return resp.SessionID, nil
}

// madeCheckout reports whether a session/new answer's _meta confirms the
// checkout the request asked for, as a dshd agent's does
// (acp/server/session.go): {"dshd.dev/checkout": {"cwd": DIR}}.
func madeCheckout(meta acp.Meta) bool {
	m, _ := meta[metaCheckout].(map[string]any)
	cwd, _ := m["cwd"].(string)
	return cwd != ""
}

// setModel selects model through the agent's model config option.
func setModel(ctx context.Context, pr *peer, sess acp.SessionID, opts []acp.SessionConfigOption, model string) error {
	for _, o := range opts {
		sel, ok := o.(*acp.SelectConfigOption)
		if !ok || sel.Category != acp.ConfigCategoryModel {
			continue
		}
		if sel.CurrentValue == model {
			return nil
		}
		_, err := pr.conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: sess, ConfigID: sel.ID, Value: acp.SelectValue(model)})
		if err != nil {
			return fmt.Errorf("the agent would not switch to the model %q: %s", model, wireMessage(err))
		}
		return nil
	}
	return fmt.Errorf("the agent offers no model choice, so the model %q cannot be selected", model)
}

// mcpServers are the parent session's MCP servers when the binding
// forwards them, less the transports the agent does not take.
func (c *child) mcpServers(pr *peer) []acp.McpServer {
	if !c.t.forwardMCP || len(c.parent.MCPServers) == 0 {
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(c.parent.MCPServers, &raws); err != nil {
		c.log.Warn("cannot read the parent's MCP servers", "err", err)
		return nil
	}
	mcp := acp.McpCapabilities{}
	if pr.init != nil {
		mcp = pr.init.AgentCapabilities.McpCapabilities
	}
	var out []acp.McpServer
	for _, raw := range raws {
		s, err := acp.UnmarshalMcpServer(raw)
		if err != nil {
			continue
		}
		switch s.(type) {
		case *acp.McpServerHTTP:
			if !mcp.HTTP {
				c.log.Info("not forwarding an http MCP server the agent does not take", "server", s.ServerName())
				continue
			}
		case *acp.McpServerSSE:
			if !mcp.SSE {
				c.log.Info("not forwarding an sse MCP server the agent does not take", "server", s.ServerName())
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// taskText is what the child is sent: its task, with the binding's
// instructions (its system prompt, rendered with the subagent variables:
// another agent's own system prompt is not ours to replace) and, when a
// schema was asked for, the answer format.
func taskText(req subagents.StartRequest, cwd string, now time.Time) (string, error) {
	instructions := req.Persona
	if req.SystemPrompt != "" {
		rendered, err := prompt.Render(req.SystemPrompt, prompt.SubagentVars(cwd, req.Model, now, req.DenyPermissions))
		if err != nil {
			return "", fmt.Errorf("the child's instructions: %w", err)
		}
		instructions = strings.TrimSpace(strings.TrimSpace(rendered) + "\n\n" + req.Persona)
	}
	var b strings.Builder
	framed := req.DenyPermissions || instructions != ""
	if req.DenyPermissions {
		b.WriteString(prompt.FixedPermissionsNote)
		b.WriteString("\n\n")
	}
	if instructions != "" {
		b.WriteString("# Instructions for this task\n\n")
		b.WriteString(instructions)
		b.WriteString("\n\n")
	}
	if framed {
		b.WriteString("# Task\n\n")
	}
	b.WriteString(req.Prompt)
	b.WriteString(answerFormat(req.OutputSchema))
	return b.String(), nil
}

// answerFormat asks for a final answer that validates against schema.
func answerFormat(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var compact strings.Builder
	compact.WriteString("\n\n# Answer format\n\nEnd with a final message that is exactly one JSON value valid against this JSON Schema, with nothing around it (no prose, no code fence):\n\n")
	var buf []byte
	if b, err := json.Marshal(json.RawMessage(schema)); err == nil {
		buf = b
	} else {
		buf = schema
	}
	compact.Write(buf)
	return compact.String()
}

// track records a route of the child, for teardown.
func (c *child) track(rt *route) {
	c.mu.Lock()
	c.routes = append(c.routes, rt)
	c.mu.Unlock()
}

// conn returns the child's current connection and session.
func (c *child) conn() (*peer, acp.SessionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peer, c.session
}

// observe hands an update of the child's own session to the run in
// progress.
func (c *child) observe(u acp.SessionUpdate) {
	if r, ok := c.runs.Current(); ok {
		r.observe(u)
	}
}

// closeSession closes sess where the agent supports session/close.
func (c *child) closeSession(pr *peer, sess acp.SessionID) {
	if !pr.alive() || pr.sessionCaps().Close == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if _, err := pr.conn.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: sess}); err != nil {
		c.log.Debug("session/close failed", "err", err)
	}
}

// release drops one run's hold on the child; the last one closes it: its
// terminals, its session, its routes and the editor's view of it, and the
// connection (a child process ends here).
func (c *child) release() {
	if !c.runs.Release() {
		return
	}
	c.mu.Lock()
	pr, sess, routes := c.peer, c.session, c.routes
	c.routes = nil
	c.mu.Unlock()
	c.stop()
	c.terms.closeAll()
	c.closeSession(pr, sess)
	pr.removeRoutes(routes)
	c.forget(routes)
	c.p.releasePeer(pr)
	if c.endpoint != "" {
		c.p.fleet.released(c.endpoint)
	}
}

// open connects to the agent and opens the child's session. On a remote
// binding the endpoints are tried in placement order (fleet.go), skipping
// skip and every endpoint that fails to connect or to open the session;
// the child is then placed on the one that took it.
func (c *child) open(ctx context.Context, skip string) (*peer, acp.SessionID, error) {
	// What is left of the budgets now: a session opened again on another
	// endpoint gets no more than the first one had left.
	left, err := c.meter.Remaining()
	if err != nil {
		return nil, "", err
	}
	if c.t.network != "remote" {
		pr, err := c.p.acquire(ctx, c.t, c.clientCaps(), c.roots())
		if err != nil {
			return nil, "", err
		}
		sess, err := c.newSession(ctx, pr, c.depth, c.limit, left, c.model)
		if err != nil {
			c.p.releasePeer(pr)
			return nil, "", err
		}
		return pr, sess, nil
	}
	var errs []error
	for _, u := range c.p.fleet.order(c.p.expand(ctx, c.t)) {
		if u == skip {
			continue
		}
		et := c.t.at(u)
		pr, err := c.p.acquire(ctx, et, c.clientCaps(), c.roots())
		if err == nil {
			var sess acp.SessionID
			if sess, err = c.newSession(ctx, pr, c.depth, c.limit, left, c.model); err == nil {
				c.mu.Lock()
				c.t, c.endpoint = et, u
				c.mu.Unlock()
				c.p.fleet.placed(u)
				return pr, sess, nil
			}
			c.p.releasePeer(pr)
			// A connection's failure names where it went; the
			// agent's answer does not.
			err = fmt.Errorf("%s: %w", u, err)
		}
		if ctx.Err() != nil {
			return nil, "", err
		}
		c.p.fleet.failed(u)
		c.log.Warn("skipping an endpoint that failed", "endpoint", u, "err", err)
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("no endpoint of %s is left to try", c.t.label)
	}
	return nil, "", errors.Join(errs...)
}

// reattach continues the child after its connection dropped during a run:
// on its endpoint through session/resume or session/load; when that
// endpoint is gone and the binding has others, as a new session on
// another endpoint, to which the run sends its task again.
func (c *child) reattach(ctx context.Context) error {
	err := c.reconnect(ctx)
	if err == nil || c.t.network != "remote" {
		return err
	}
	c.mu.Lock()
	old, oldRoutes, from := c.peer, c.routes, c.endpoint
	c.mu.Unlock()
	c.p.fleet.failed(from)
	startCtx, cancel := context.WithTimeout(ctx, c.t.startTimeout)
	defer cancel()
	pr, sess, oerr := c.open(startCtx, from)
	if oerr != nil {
		return fmt.Errorf("%w; no other endpoint took the task: %v", err, oerr)
	}
	c.log.Warn("the child's endpoint is gone: its task goes to another", "from", from, "to", c.endpoint)
	c.p.fleet.released(from)
	own := &route{c: c, down: sess, up: c.up}
	c.leave(old, oldRoutes)
	c.mu.Lock()
	c.peer, c.session = pr, sess
	c.routes = []*route{own}
	c.mu.Unlock()
	pr.addRoute(own)
	c.p.releasePeer(old)
	return nil
}

// leave takes the child's routes off the connection it is moving from:
// the routes of its relayed children are lost with that connection, and
// the editor forgets them.
func (c *child) leave(old *peer, routes []*route) {
	old.removeRoutes(routes)
	var gone []*route
	for _, rt := range routes {
		if rt.parent != nil {
			gone = append(gone, rt)
		}
	}
	old.lostRoutes(gone)
	c.forget(gone)
}

// forget drops the editor's routes of the child and its relayed children.
func (c *child) forget(routes []*route) {
	if c.expose == nil {
		return
	}
	for i := len(routes) - 1; i >= 0; i-- {
		if routes[i].up != "" {
			c.expose.Forget(routes[i].up)
		}
	}
}

// reconnect continues the child's session on a new connection after the
// old one ended, where the agent can resume or load sessions. The
// relayed children of the old connection are gone with it.
func (c *child) reconnect(ctx context.Context) error {
	c.mu.Lock()
	old, sess, oldRoutes := c.peer, c.session, c.routes
	c.mu.Unlock()
	init := old.init // a restored child's placeholder keeps the agent's
	if init == nil || (init.AgentCapabilities.SessionCapabilities.Resume == nil && !init.AgentCapabilities.LoadSession) {
		return &subagents.Error{Code: subagents.CodeRunFinished, Message: "the connection to the subagent is gone and the agent cannot resume sessions"}
	}
	startCtx, cancel := context.WithTimeout(ctx, c.t.startTimeout)
	defer cancel()
	pr, err := c.p.acquire(startCtx, c.t, c.clientCaps(), c.roots())
	if err != nil {
		return fmt.Errorf("%s could not be restarted: %w", c.t.label, err)
	}
	own := &route{c: c, down: sess, up: c.up}
	sc := pr.sessionCaps()
	switch {
	case sc.Resume != nil:
		pr.addRoute(own)
		_, err = pr.conn.ResumeSession(startCtx, &acp.ResumeSessionRequest{SessionID: sess, Cwd: c.cwd, McpServers: c.mcpServers(pr)})
	case pr.init.AgentCapabilities.LoadSession:
		// The replayed conversation was shown already.
		own.replaying.Store(true)
		pr.addRoute(own)
		_, err = pr.conn.LoadSession(startCtx, &acp.LoadSessionRequest{SessionID: sess, Cwd: c.cwd, McpServers: c.mcpServers(pr)})
		own.replaying.Store(false)
	default:
		err = fmt.Errorf("the agent no longer resumes sessions")
	}
	if err != nil {
		pr.removeRoutes([]*route{own})
		c.p.releasePeer(pr)
		return fmt.Errorf("%s could not continue the session: %s", c.t.label, wireMessage(err))
	}
	c.leave(old, oldRoutes)
	c.mu.Lock()
	c.peer = pr
	c.routes = []*route{own}
	c.mu.Unlock()
	c.p.releasePeer(old)
	return nil
}
