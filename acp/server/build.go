// This file assembles an open session: its workspace, file system,
// runner, permission policy, tool layer, delegation scope and agent.

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
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
		switch s.(type) {
		case *acp.McpServerHTTP:
			if o.ConnectMCP == nil || !o.MCPHTTP {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d]", i), "reason": "http MCP servers are not supported"})
			}
		case *acp.McpServerSSE:
			if o.ConnectMCP == nil || !o.MCPSSE {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d]", i), "reason": "sse MCP servers are not supported"})
			}
		case *acp.McpServerStdio:
			if !filepath.IsAbs(s.(*acp.McpServerStdio).Command) {
				return acp.ErrInvalidParams.WithData(map[string]any{"field": fmt.Sprintf("mcpServers[%d].command", i), "reason": "must be an absolute path"})
			}
		}
	}
	return nil
}

// depthFromMeta reads the delegation depth a parent dshd passed.
func (c *Conn) depthFromMeta(meta acp.Meta) (depth, maxDepth int) {
	maxDepth = c.srv.opts.MaxDepth
	if v, ok := meta[metaDepth].(float64); ok && v > 0 {
		depth = int(v)
	}
	if v, ok := meta[metaMaxDepth].(float64); ok && v >= 0 && int(v) < maxDepth {
		maxDepth = int(v)
	}
	return depth, maxDepth
}

// open builds the live parts of a session around s and registers it on
// the connection. history is the conversation to continue.
func (c *Conn) open(ctx context.Context, s *session.Session, cwd string, dirs []string, servers []acp.McpServer, history []llm.Message, depth, maxDepth int) (*liveSession, []string, error) {
	o := &c.srv.opts
	ws, err := workspace.New(cwd, dirs)
	if err != nil {
		return nil, nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": err.Error()})
	}
	id := acp.SessionID(s.ID())
	st := s.State()
	mode, err := tools.ParseMode(st.Mode)
	if err != nil {
		mode = o.Mode
	}
	model := st.Model
	if model == "" {
		model = o.DefaultModel
	}
	ls := &liveSession{s: s, cwd: cwd, dirs: dirs, depth: depth, maxDepth: maxDepth}
	ls.titled.Store(st.Title != "")
	ls.policy = tools.NewPolicy(mode, &asker{c: c, ls: ls})
	ls.reg = tools.NewRegistry(o.Tools)

	caps := c.clientCaps()
	env := &tools.Env{
		Workspace:  ws,
		FS:         c.fileSystem(caps, id, workspace.NewLocalFS(ws)),
		Runner:     c.runner(caps, id),
		Permission: ls.policy,
	}
	var warnings []string
	if len(servers) > 0 && o.ConnectMCP != nil {
		ls.closeMCP, warnings = o.ConnectMCP(ctx, cwd, dirs, servers, ls.reg)
	}

	system := func(ctx context.Context) (string, error) {
		return c.systemPrompt(ls, cwd)
	}
	compact, _ := prompt.Template(prompt.Compaction)
	ls.agent = agent.New(agent.Options{
		ID:              string(id),
		Model:           o.Model,
		ModelID:         model,
		MaxTokens:       o.MaxTokens,
		ContextWindow:   c.contextWindow(model),
		MaxTurnRequests: o.MaxTurnRequests,
		System:          system,
		CompactPrompt:   compact,
		Tools:           ls.reg,
		Env:             env,
		History:         agent.NewHistory(history...),
		Registry:        o.Agents,
		Logger:          c.log.With("session", id),
		OnMessage: func(m llm.Message) {
			if err := s.RecordMessage(m); err != nil {
				c.log.Warn("journal append failed", "session", id, "err", err)
			}
		},
		OnReset: func(msgs []llm.Message) {
			if err := s.RecordReset(msgs); err != nil {
				c.log.Warn("journal append failed", "session", id, "err", err)
			}
		},
	})
	s.SetAgent(ls.agent)
	ls.scope = &subagents.Scope{
		Service:               o.Subagents,
		SessionID:             string(id),
		Agent:                 ls.agent,
		Depth:                 depth,
		MaxDepth:              maxDepth,
		Cwd:                   cwd,
		AdditionalDirectories: dirs,
		Model:                 o.Model,
		ModelID:               model,
		MaxTokens:             o.MaxTokens,
		ContextWindow:         c.contextWindow(model),
		Tools:                 ls.reg,
		Env:                   env,
		SystemPrompt:          system,
		Registry:              o.Agents,
	}
	if raw, err := json.Marshal(servers); err == nil && len(servers) > 0 {
		ls.scope.MCPServers = raw
	}
	if c.optedIn() {
		ls.scope.Expose = &exposure{c: c, root: ls}
	}
	env.Scope = ls.scope

	if err := c.srv.claim(id, c); err != nil {
		ls.agent.Close()
		if ls.closeMCP != nil {
			ls.closeMCP()
		}
		return nil, nil, err
	}
	c.mu.Lock()
	c.sessions[id] = ls
	c.mu.Unlock()
	return ls, warnings, nil
}

// systemPrompt renders the system template for a turn, rescuing {{cwd}}
// if a template override forgot to register it, and appends AGENTS.md.
func (c *Conn) systemPrompt(ls *liveSession, cwd string) (string, error) {
	tmpl, err := systemTemplate()
	if err != nil {
		return "", err
	}
	vars := prompt.SystemVars(cwd, ls.agent.ModelID(), c.srv.opts.Now())
	out, err := prompt.RenderWith(tmpl, vars, func(name string) (string, bool) {
		if name == prompt.VarCwd {
			return cwd, true
		}
		return "", false
	})
	if err != nil {
		return "", err
	}
	if extra := ls.instructions.get(cwd); extra != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + extra
	}
	return out, nil
}

// systemTemplate is the embedded system prompt template, read once.
var systemTemplate = sync.OnceValues(func() (string, error) { return prompt.Template(prompt.System) })

// instructions caches a session's AGENTS.md section, re-read only when the
// file's size or modification time changes (a turn must not pay a read).
type instructions struct {
	mu      sync.Mutex
	size    int64
	mod     time.Time
	present bool
	text    string
}

func (in *instructions) get(cwd string) string {
	fi, err := os.Stat(filepath.Join(cwd, prompt.ProjectInstructionsFile))
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		in.present, in.text = false, ""
		return ""
	}
	if in.present && fi.Size() == in.size && fi.ModTime().Equal(in.mod) {
		return in.text
	}
	text, err := prompt.ProjectInstructions(cwd)
	if err != nil {
		return ""
	}
	in.present, in.size, in.mod, in.text = true, fi.Size(), fi.ModTime(), text
	return text
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
