// This file turns a session request into a live session: it checks what
// the client sent and hands session.New the configuration, with the
// editor-backed file system, runner and permission asker.

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// _meta keys a parent dshd sets on session/new for a subagent child.
const (
	metaDepth    = "dshd.dev/depth"
	metaMaxDepth = "dshd.dev/maxDepth"
)

// checkDirs validates cwd and additional directories: absolute, non-empty.
func checkDirs(cwd string, dirs []string) error {
	if !filepath.IsAbs(cwd) {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "must be absolute"})
	}
	for i, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("additionalDirectories[%d]", i), "reason": "must be a non-empty absolute path"})
		}
	}
	return nil
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

// checkMCP refuses transports the daemon does not advertise.
func (c *Conn) checkMCP(servers []acp.McpServer) error {
	o := &c.srv.opts
	for i, s := range servers {
		switch s := s.(type) {
		case *acp.McpServerHTTP:
			if o.ConnectMCP == nil || !o.MCPHTTP {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d]", i), "reason": "http MCP servers are not supported"})
			}
		case *acp.McpServerSSE:
			if o.ConnectMCP == nil || !o.MCPSSE {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d]", i), "reason": "sse MCP servers are not supported"})
			}
		case *acp.McpServerStdio:
			if !filepath.IsAbs(s.Command) {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d].command", i), "reason": "must be an absolute path"})
			}
		}
	}
	return nil
}

// depthFromMeta reads the delegation depth and limit a parent dshd
// passed. given is the parent's limit, recorded with the session so that
// it still binds when the session is loaded or resumed; nil when there is
// none.
func depthFromMeta(meta acp.Meta) (depth int, given *int) {
	if v, ok := meta[metaDepth].(float64); ok && v > 0 {
		depth = int(v)
	}
	if v, ok := meta[metaMaxDepth].(float64); ok && v >= 0 {
		limit := int(v)
		given = &limit
	}
	return depth, given
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
	if maxDepth > 0 {
		scope := &subagents.Scope{Service: o.Subagents, SessionID: string(id), Depth: depth, MaxDepth: maxDepth}
		if c.optedIn() {
			ex = &exposure{c: c}
			scope.Expose = ex
		}
		delegation = scope
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
		Thinking:              session.ThinkingOf(stored.State.Thinking),
		Tools:                 o.Tools,
		FS:                    func(local tools.FileSystem) tools.FileSystem { return c.fileSystem(caps, id, local) },
		Runner:                c.runner(caps, id),
		Mode:                  mode,
		Asker:                 ask,
		Now:                   o.Now,
		Delegation:            delegation,
		History:               history(stored, hist),
		Stored:                stored,
		Registry:              o.Agents,
		Logger:                c.log.With("session", id),
	}
	if len(servers) > 0 {
		if raw, err := json.Marshal(servers); err == nil {
			cfg.MCPServers = raw
		}
		if o.ConnectMCP != nil {
			cfg.ConnectMCP = func(ctx context.Context, layer *tools.Registry) (func(), []string) {
				return o.ConnectMCP(ctx, cwd, dirs, servers, layer)
			}
		}
	}
	s, err := session.New(ctx, cfg)
	if err != nil {
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
		return nil, err
	}
	c.mu.Lock()
	c.sessions[id] = s
	c.mu.Unlock()
	return s, nil
}

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
