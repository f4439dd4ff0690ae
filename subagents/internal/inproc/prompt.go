// This file builds what the child is told: its system prompt and, for a
// fork, the framing of its task.

package inproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
)

// forkFrame tells a forked child, whose context is the parent's
// conversation, that it is now a subagent with one task.
const forkFrame = `You are now a subagent forked from this conversation. Everything above is the conversation so far, which you share with the agent that started you; that agent is waiting for you to do the one task below, and it will receive only your final message.

Do that task, using what you already know from the conversation, and nothing beyond it: do not carry on with the earlier work. Nobody can answer questions while you run; when something is ambiguous, make the most reasonable choice and say so. End with a complete, self-contained report: the outcome first (done, partly done, or not possible), then the facts the other agent needs (findings with path:line references, files changed and how, how you verified them), and anything you could not do and why.`

// childSystem returns the spawned child's system prompt: the request's,
// else the configured template, else the embedded subagent template; each
// rendered with the subagent variables. A template that does not use
// {{permissions}} gets the permissions note appended. Persona and the
// project's AGENTS.md follow.
func (p *Provider) childSystem(req subagents.StartRequest, cwd, modelID string, now time.Time) (string, error) {
	tmpl := req.SystemPrompt
	if tmpl == "" {
		tmpl = p.cfg.SystemTemplate
	}
	if tmpl == "" {
		tmpl = p.defaultTemplate
	}
	base, err := p.renderBase(baseKey{tmpl: tmpl, cwd: cwd, model: modelID, date: now.Format(time.DateOnly), deny: req.DenyPermissions}, now)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(base)
	if req.Persona != "" {
		b.WriteString("\n\n# Instructions for this task\n\n")
		b.WriteString(req.Persona)
	}
	if !p.cfg.SkipProjectInstructions {
		if pi := p.instructions.get(cwd); pi != "" {
			b.WriteString("\n\n")
			b.WriteString(pi)
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

// baseKey is everything a rendered template depends on.
type baseKey struct {
	tmpl, cwd, model, date string
	deny                   bool
}

// maxBases bounds the cache of rendered templates; it is cleared when full.
const maxBases = 256

// renderBase renders a template with the subagent variables, appending
// the permissions note when the template does not place it. Results are
// cached: a child is started far more often than its inputs change.
func (p *Provider) renderBase(k baseKey, now time.Time) (string, error) {
	p.basesMu.Lock()
	base, ok := p.bases[k]
	p.basesMu.Unlock()
	if ok {
		return base, nil
	}
	vars := prompt.SubagentVars(k.cwd, k.model, now, k.deny)
	text, err := prompt.Render(k.tmpl, vars)
	if err != nil {
		return "", fmt.Errorf("the child's system prompt: %w", err)
	}
	base = strings.TrimRight(text, "\n")
	if names, err := prompt.Variables(k.tmpl); err == nil && !slices.Contains(names, prompt.VarPermissions) {
		base += "\n\n" + vars[prompt.VarPermissions]
	}
	p.basesMu.Lock()
	if len(p.bases) >= maxBases {
		clear(p.bases)
	}
	p.bases[k] = base
	p.basesMu.Unlock()
	return base, nil
}

// instructionsCache keeps each cwd's AGENTS.md section, read again only
// when the file's size or modification time changes.
type instructionsCache struct {
	mu      sync.Mutex
	entries map[string]instructionsEntry
}

type instructionsEntry struct {
	size    int64
	modTime time.Time
	text    string
}

func (c *instructionsCache) get(cwd string) string {
	st, err := os.Stat(filepath.Join(cwd, prompt.ProjectInstructionsFile))
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	c.mu.Lock()
	e, ok := c.entries[cwd]
	c.mu.Unlock()
	if ok && e.size == st.Size() && e.modTime.Equal(st.ModTime()) {
		return e.text
	}
	text, err := prompt.ProjectInstructions(cwd)
	if err != nil {
		return ""
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxBases {
		c.entries = make(map[string]instructionsEntry)
	}
	c.entries[cwd] = instructionsEntry{size: st.Size(), modTime: st.ModTime(), text: text}
	c.mu.Unlock()
	return text
}

// childInput returns the text of the child's turn: the task, framed for a
// fork (whose system prompt is the parent's, kept byte-identical so the
// shared prefix stays cacheable), with the answer format when an output
// schema was asked for.
func childInput(inherit bool, req subagents.StartRequest) string {
	var b strings.Builder
	if inherit {
		b.WriteString(forkFrame)
		if req.DenyPermissions {
			b.WriteString("\n\n")
			b.WriteString(prompt.FixedPermissionsNote)
		}
		if req.Persona != "" {
			b.WriteString("\n\n# Instructions for this task\n\n")
			b.WriteString(req.Persona)
		}
		b.WriteString("\n\n# Task\n\n")
	}
	b.WriteString(req.Prompt)
	if len(req.OutputSchema) > 0 {
		b.WriteString("\n\n# Answer format\n\nYour final message must be one JSON value, valid against the JSON Schema below, and nothing else: no prose and no code fence around it.\n\n")
		var compact bytes.Buffer
		if err := json.Compact(&compact, req.OutputSchema); err == nil {
			b.Write(compact.Bytes())
		} else {
			b.Write(req.OutputSchema)
		}
	}
	return b.String()
}
