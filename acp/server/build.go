// This file turns a session request into a live session: it checks what
// the client sent and hands session.New the configuration, with the
// editor-backed file system, runner and permission asker.

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/budget"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/subagent"
)

// _meta keys a parent dshd sets on session/new for a subagent child: its
// depth and the depth limit of its subtree, and what is left of the
// budgets above it (subagents/acp/child.go).
const (
	metaDepth     = "dshd.dev/depth"
	metaMaxDepth  = "dshd.dev/maxDepth"
	metaMaxTokens = "dshd.dev/maxTokens"
	metaMaxTurns  = "dshd.dev/maxTurns"
)

// DefaultMaxAdditionalDirectories is the default of DirLimits.Max.
const DefaultMaxAdditionalDirectories = 64

// maxDirBytes bounds each entry of additionalDirectories: PATH_MAX on
// Linux, beyond which no system call takes the path anyway.
const maxDirBytes = 4096

// DirLimits bound the additionalDirectories of session/new, load, resume
// and fork. Each entry is a root the session's tools are confined to,
// held with the live session, in its sidecar and journal, and in every
// session/list answer: a list without a bound would cost memory and disk
// for as long as the session is kept.
type DirLimits struct {
	// Max is how many entries one request may name (0:
	// DefaultMaxAdditionalDirectories).
	Max int
	// Setting names Max in the refusal and the log (empty:
	// "MaxAdditionalDirectories").
	Setting string
}

// checkDirs validates cwd and additional directories before anything is
// created or opened: cwd absolute and at most maxDirBytes long; at most
// DirLimits.Max directories, each non-empty, absolute, at most
// maxDirBytes long; and, unless the client serves the files, cwd and each
// of them an existing directory, since the session's tools are confined to its roots (a
// root that is not there could never be used, and ACP forbids dropping
// one silently). A refusal is -32602 naming the entry (its index) or the
// bound; the first of a connection's count refusals is logged.
func (c *Conn) checkDirs(cwd string, dirs []string) error {
	if !filepath.IsAbs(cwd) {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "must be absolute"})
	}
	if len(cwd) > maxDirBytes {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": fmt.Sprintf("is %d bytes long, longer than a path may be (%d bytes, PATH_MAX)", len(cwd), maxDirBytes)})
	}
	limit, setting := c.srv.opts.Dirs.Max, c.srv.opts.Dirs.Setting
	if limit <= 0 {
		limit = DefaultMaxAdditionalDirectories
	}
	if setting == "" {
		setting = "MaxAdditionalDirectories"
	}
	if len(dirs) > limit {
		if !c.loggedDirs.Swap(true) {
			c.log.Warn("refusing a session: more additional directories than allowed", "setting", setting, "limit", limit, "directories", len(dirs), "peer", c.peerName)
		}
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "additionalDirectories", "setting": setting, "limit": limit,
			"reason": fmt.Sprintf("%d directories, more than %s (%d) allows", len(dirs), setting, limit)})
	}
	// Every entry's form first: a malformed list costs no file system
	// access.
	for i, d := range dirs {
		reason := ""
		switch {
		case d == "" || !filepath.IsAbs(d):
			reason = "must be a non-empty absolute path"
		case len(d) > maxDirBytes:
			reason = fmt.Sprintf("is %d bytes long, longer than a path may be (%d bytes, PATH_MAX)", len(d), maxDirBytes)
		}
		if reason != "" {
			return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("additionalDirectories[%d]", i), "reason": reason})
		}
	}
	// A client that serves the files (fs/*: an editor, or the parent dshd
	// of a remote child, which passes its own directories on) names
	// directories of its machine, which need not be this one.
	if fs := c.clientCaps().FS; fs.ReadTextFile || fs.WriteTextFile {
		return nil
	}
	if reason := notADirectory(cwd); reason != "" {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": reason})
	}
	for i, d := range dirs {
		if reason := notADirectory(d); reason != "" {
			return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("additionalDirectories[%d]", i), "reason": reason})
		}
	}
	return nil
}

// notADirectory says why d is not a directory dshd can work in, or "".
func notADirectory(d string) string {
	fi, err := os.Stat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("there is no directory %s", d)
	case err != nil:
		return fmt.Sprintf("cannot use %s: %v", d, err)
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a directory", d)
	}
	return ""
}

// dedupe keeps the first occurrence of each directory, in order.
func dedupe(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// usableMCP splits a session's MCP entries into those the daemon can
// connect and warnings for the rest: a transport it does not advertise
// is a warning for the client, never a failed session. What is wrong
// with a usable entry (a command not found) the connector reports.
func (c *Conn) usableMCP(servers []acp.McpServer) (usable []acp.McpServer, warnings []string) {
	o := &c.srv.opts
	for i, s := range servers {
		kind := ""
		switch s.(type) {
		case *acp.McpServerHTTP:
			if !o.MCPHTTP {
				kind = "http"
			}
		case *acp.McpServerSSE:
			if !o.MCPSSE {
				kind = "sse"
			}
		}
		if o.ConnectMCP == nil {
			kind = "any"
		}
		if kind != "" {
			warnings = append(warnings, fmt.Sprintf("MCP server %q (mcpServers[%d]) is not used: this daemon does not connect %s MCP servers", s.ServerName(), i, kind))
			continue
		}
		usable = append(usable, s)
	}
	return usable, warnings
}

// newSessionMeta are the dshd.dev/ _meta keys session/new takes, each
// with the check of its value: what it must be, or "" when it is good.
// session/load, resume and fork take none: the session keeps the depth,
// budget and checkout it was created with.
var newSessionMeta = map[string]func(v any) string{
	metaDepth:     wholeMeta(0, "the session's delegation depth"),
	metaMaxDepth:  wholeMeta(0, "the depth limit of its subtree"),
	metaMaxTokens: wholeMeta(1, "the tokens the session may spend"),
	metaMaxTurns:  wholeMeta(1, "the model round trips the session may make"),
	metaCheckout:  checkoutMeta,
}

// metaPrefix is dshd's own namespace of _meta keys.
const metaPrefix = "dshd.dev/"

// checkMeta refuses (-32602) the _meta of a method's request when it holds
// a key of dshd's namespace the method does not take (a typo is answered
// with the closest key it takes), or a value it cannot use, naming what
// it got and what it takes. Read as best it could be, such a value would
// change the session without a word: a maxTokens of "50000" read as a
// spent budget, a maxDepth of "0" as none. Keys of other namespaces are
// left alone: _meta is open to any extension.
func checkMeta(method string, meta acp.Meta) error {
	var takes map[string]func(any) string
	if method == acp.MethodSessionNew {
		takes = newSessionMeta
	}
	known := slices.Sorted(maps.Keys(takes))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if !strings.HasPrefix(k, metaPrefix) {
			continue
		}
		check, ok := takes[k]
		if !ok && len(known) == 0 {
			return metaError(k, fmt.Sprintf("is not a key %s takes: it takes no %s keys (the session keeps the depth, budget and checkout it was created with)", method, metaPrefix))
		}
		if !ok {
			return metaError(k, fmt.Sprintf("is not a key %s takes (it takes %s)%s", method, strings.Join(known, ", "), suggest.DidYouMean(k, known)))
		}
		if want := check(meta[k]); want != "" {
			return metaError(k, fmt.Sprintf("must be %s, not %s", want, describeJSON(meta[k])))
		}
	}
	return nil
}

// metaError is the -32602 answer naming the _meta key at fault.
func metaError(key, reason string) error {
	return acp.ErrInvalidParams.WithData(map[string]any{"field": "_meta." + key, "reason": reason})
}

// wholeMeta checks a _meta value that must be a JSON whole number of at
// least lowest, which counts what.
func wholeMeta(lowest int, what string) func(any) string {
	return func(v any) string {
		if n, ok := v.(float64); !ok || n != math.Trunc(n) || n < float64(lowest) {
			return fmt.Sprintf("a whole number from %d up (%s)", lowest, what)
		}
		return ""
	}
}

// checkoutMeta checks the value of dshd.dev/checkout (checkout.go):
// {"repo": URL, "rev": revision}, rev optional.
func checkoutMeta(v any) string {
	const want = `an object {"repo": URL, "rev": revision} (rev optional)`
	m, ok := v.(map[string]any)
	if !ok {
		return want
	}
	if repo, ok := m["repo"].(string); !ok || repo == "" {
		return want + ` whose repo is a non-empty string`
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "repo":
		case "rev":
			if _, ok := m[k].(string); !ok {
				return want + ` whose rev is a string`
			}
		default:
			return want + fmt.Sprintf(" with no other key (it has %q)", k)
		}
	}
	return ""
}

// describeJSON says what a decoded JSON value a client sent is: its kind
// and, cut short, the value itself.
func describeJSON(v any) string {
	var kind string
	switch v.(type) {
	case nil:
		return "null"
	case string:
		kind = "the string"
	case float64:
		kind = "the number"
	case bool:
		kind = "the boolean"
	case []any:
		kind = "the array"
	default:
		kind = "the object"
	}
	b, _ := json.Marshal(v)
	return kind + " " + utf8cut.Line(string(b), 80)
}

// depthFromMeta reads the delegation depth and limit a parent dshd
// passed (checked by checkMeta). given is the parent's limit, recorded
// with the session so that it still binds when the session is loaded or
// resumed; nil when there is none.
func depthFromMeta(meta acp.Meta) (depth int, given *int) {
	// Beyond any depth a daemon's limit allows, and within an int.
	const most = math.MaxInt32
	if v, ok := meta[metaDepth].(float64); ok {
		depth = int(min(v, most))
	}
	if v, ok := meta[metaMaxDepth].(float64); ok {
		limit := int(min(v, most))
		given = &limit
	}
	return depth, given
}

// budgetFromMeta reads the budget a parent dshd gave a child session
// (checked by checkMeta: whole numbers from 1 up): the tokens and model
// round trips the session and everything it delegates may spend, over
// its whole life. Nil when the parent set none.
func budgetFromMeta(meta acp.Meta) *budget.Limits {
	var l budget.Limits
	read := func(key string) int64 {
		if n, ok := meta[key].(float64); ok {
			return int64(min(n, 1<<62))
		}
		return 0
	}
	l.Tokens, l.Turns = read(metaMaxTokens), read(metaMaxTurns)
	if l.IsZero() {
		return nil
	}
	return &l
}

// depthLimit is the limit in force for a session: the daemon's own,
// lowered (never raised) by the one its parent gave.
func (c *Conn) depthLimit(given *int) int {
	limit := c.srv.opts.MaxDepth
	if given != nil && *given < limit {
		limit = *given
	}
	return limit
}

// noDelegation is the delegation of a session whose depth limit is 0: its
// agent is not offered the delegating tools at all.
type noDelegation struct{}

func (noDelegation) Attach(_ *session.Session, ts agent.ToolSet) agent.ToolSet {
	return withoutDelegators{ts}
}

// withoutDelegators is a tool set without its subagents.Delegator tools.
type withoutDelegators struct{ ts agent.ToolSet }

func (w withoutDelegators) Tools() []tools.Tool {
	all := w.ts.Tools()
	out := make([]tools.Tool, 0, len(all))
	for _, tl := range all {
		if _, delegates := tl.(subagents.Delegator); !delegates {
			out = append(out, tl)
		}
	}
	return out
}

func (w withoutDelegators) Get(name string) (tools.Tool, bool) {
	tl, ok := w.ts.Get(name)
	if _, delegates := tl.(subagents.Delegator); delegates {
		return nil, false
	}
	return tl, ok
}

// open builds the live session over stored (its journal, new or
// reopened) and registers it on the connection. Its conversation is
// stored's messages, or hist when set (a fork's, shared with the session
// it was forked from). On failure the journal is closed.
func (c *Conn) open(ctx context.Context, id acp.SessionID, stored *session.Stored, cwd string, dirs []string, servers []acp.McpServer, depth, maxDepth int, hist *agent.History) (*session.Session, error) {
	release, err := c.reserveSession(id)
	if err != nil {
		stored.Close() // its journal holds the session's lock and a descriptor
		return nil, err
	}
	defer release()
	o := &c.srv.opts
	mode, err := permission.ParseMode(stored.State.Mode)
	if err != nil {
		mode = o.Mode
	}
	model := stored.State.Model
	if model == "" {
		model = o.DefaultModel
	}
	caps := c.clientCaps()
	ask := &asker{c: c}
	// A subagents.Scope reads a MaxDepth of 0 as the default limit, so a
	// limit of 0 is no scope at all.
	var delegation session.Delegation = noDelegation{}
	var ex *exposure
	taskOpts := o.Tasks
	taskOpts.Logger = c.log.With("session", id)
	if maxDepth > 0 {
		scope := &subagents.Scope{Service: o.Subagents, SessionID: string(id), Depth: depth, MaxDepth: maxDepth}
		if c.optedIn() {
			ex = &exposure{c: c}
			scope.Expose = ex
		}
		delegation = scope
		// A background subagent loaded from the journal continues
		// through this session's binding of the same name.
		taskOpts.Restore = subagent.RestoreJob(o.Subagents, scope)
	}
	ws, mistakes := c.openWorkspace(cwd)
	ws.pending = mistakes
	toolLayer := o.Tools
	if ws.defs != nil {
		toolLayer = ws.defs.Tools()
	}
	var meter *budget.Meter
	if b := stored.Meta.Budget; b != nil {
		// A parent bounded this session: every turn, and all it delegates,
		// charges one meter bounded by what the parent gave.
		meter = budget.New(*b)
	}
	cfg := session.Config{
		ID:                    string(id),
		Cwd:                   cwd,
		AdditionalDirectories: dirs,
		Model:                 o.Model,
		ModelID:               model,
		MaxTokens:             o.MaxTokens,
		ContextWindow:         c.contextWindow(model),
		MaxTurnRequests:       o.MaxTurnRequests,
		Meter:                 meter,
		TurnLimits:            budget.Limits{Tokens: int64(max(o.MaxTokensPerTurn, 0))},
		Thinking:              session.ThinkingOf(stored.State.Thinking),
		Tools:                 toolLayer,
		FS:                    func(local tools.FileSystem) tools.FileSystem { return c.fileSystem(caps, id, local) },
		Runner:                c.runner(caps, id),
		Mode:                  mode,
		Asker:                 ask,
		Now:                   o.Now,
		Instructions:          o.Instructions,
		Reads:                 o.Reads,
		Delegation:            delegation,
		Tasks:                 taskOpts,
		History:               history(stored, hist),
		ContextUsed:           lastUsage(id, stored.Updates),
		Stored:                stored,
		Registry:              o.Agents,
		Logger:                c.log.With("session", id),
	}
	if len(servers) > 0 {
		if raw, err := json.Marshal(servers); err == nil {
			cfg.MCPServers = raw
		}
		usable, warnings := c.usableMCP(servers)
		cfg.ConnectMCP = func(ctx context.Context, layer *tools.Registry) (func(), []string) {
			if len(usable) == 0 {
				return nil, warnings
			}
			closer, more := o.ConnectMCP(ctx, cwd, dirs, usable, layer)
			return closer, append(warnings, more...)
		}
	}
	s, err := session.New(ctx, cfg)
	if err != nil {
		ws.close()
		stored.Close()
		var we *session.WorkspaceError
		if errors.As(err, &we) {
			return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": we.Err.Error()})
		}
		return nil, acp.ErrInternal.Errorf("opening the session: %v", err)
	}
	ask.s = s
	if ex != nil {
		ex.root = s
	}
	if err := c.srv.claim(id, c); err != nil {
		s.Close()
		ws.close()
		return nil, err
	}
	c.mu.Lock()
	closing := c.closing
	if !closing {
		c.sessions[id] = s
		c.workspaces[id] = ws
	}
	c.mu.Unlock()
	if closing {
		// The connection's shutdown closed the sessions it had before
		// this one was done (it cancels the requests still running only
		// after): registered now, nobody would close it, and it would
		// stay open and claimed for the daemon's life. Nobody reads the
		// answer either.
		c.closeSession(s)
		ws.close()
		return nil, errConnClosing
	}
	return s, nil
}

// errConnClosing answers a request whose connection closed while it
// opened a session; the answer is dropped with the connection.
var errConnClosing = acp.ErrInternal.WithData(map[string]any{"reason": "the connection closed while the session was being opened"})

func history(stored *session.Stored, hist *agent.History) agent.History {
	if hist != nil {
		return *hist
	}
	return agent.NewHistory(stored.Messages...)
}

// contextWindow is the configured window, else the model's, else 128000.
func (c *Conn) contextWindow(model string) int {
	o := &c.srv.opts
	if o.ContextWindow > 0 {
		return o.ContextWindow
	}
	for _, m := range o.models() {
		if m.ID == model && m.ContextWindow > 0 {
			return m.ContextWindow
		}
	}
	return 128000
}

// lastUsage is the context usage the session last reported (its last
// recorded usage_update), so a reopened session's meter shows what the
// conversation holds rather than zero; 0 when it never reported one.
func lastUsage(id acp.SessionID, updates []json.RawMessage) int64 {
	for i := len(updates) - 1; i >= 0; i-- {
		raw := updates[i]
		if !bytes.Contains(raw, []byte(acp.UpdateUsageUpdate)) {
			continue
		}
		var n struct {
			SessionID acp.SessionID `json:"sessionId"`
			Update    struct {
				Kind string `json:"sessionUpdate"`
				Used int64  `json:"used"`
			} `json:"update"`
		}
		if json.Unmarshal(raw, &n) == nil && n.SessionID == id && n.Update.Kind == acp.UpdateUsageUpdate {
			return n.Update.Used
		}
	}
	return 0
}
