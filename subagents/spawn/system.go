// This file is what makes a spawned child fresh: an empty conversation
// and a system prompt of its own, rendered from the subagent template.

package spawn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/inproc"
)

// system renders spawned children's system prompts.
type system struct {
	template    string // the configured template; "" for the embedded one
	skipProject bool
	now         func() time.Time
	embedded    string

	mu    sync.Mutex
	bases map[baseKey]string // guarded by mu
}

func newSystem(template string, skipProject bool, now func() time.Time) *system {
	// The embedded template always exists; a failure here is a build error.
	embedded, err := prompt.Template(prompt.Subagent)
	if err != nil {
		panic(err)
	}
	return &system{template: template, skipProject: skipProject, now: now, embedded: embedded, bases: make(map[baseKey]string)}
}

// begin starts a fresh child: no history, and a system prompt rendered
// once, at Start.
func (s *system) begin(parent *session.Session, req subagents.StartRequest, modelID string) (inproc.Beginning, error) {
	project := ""
	if !s.skipProject {
		// The parent's, as its own turns read it: within its bound, and
		// logged and told by its session when it cannot be used.
		project = parent.ProjectInstructions()
	}
	text, err := s.prompt(req, parent.Cwd(), modelID, s.now(), project)
	if err != nil {
		return inproc.Beginning{}, err
	}
	return inproc.Beginning{System: func(context.Context) (string, error) { return text, nil }}, nil
}

// prompt returns the spawned child's system prompt: the request's, else
// the configured template, else the embedded subagent template; each
// rendered with the subagent variables. A template that does not use
// {{permissions}} gets the permissions note appended. Persona and the
// project's AGENTS.md section (project, "" for none) follow.
func (s *system) prompt(req subagents.StartRequest, cwd, modelID string, now time.Time, project string) (string, error) {
	tmpl := req.SystemPrompt
	if tmpl == "" {
		tmpl = s.template
	}
	if tmpl == "" {
		tmpl = s.embedded
	}
	base, err := s.renderBase(baseKey{tmpl: tmpl, cwd: cwd, model: modelID, date: now.Format(time.DateOnly), deny: req.DenyPermissions}, now)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(base)
	if req.Persona != "" {
		b.WriteString("\n\n# Instructions for this task\n\n")
		b.WriteString(req.Persona)
	}
	if project != "" {
		b.WriteString("\n\n")
		b.WriteString(project)
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
func (s *system) renderBase(k baseKey, now time.Time) (string, error) {
	s.mu.Lock()
	base, ok := s.bases[k]
	s.mu.Unlock()
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
	s.mu.Lock()
	if len(s.bases) >= maxBases {
		clear(s.bases)
	}
	s.bases[k] = base
	s.mu.Unlock()
	return base, nil
}
