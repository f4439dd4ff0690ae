// This file builds what the child is told: its system prompt and, for a
// fork, the framing of its task.

package inproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
func childSystem(cfg *Config, req subagents.StartRequest, cwd, modelID string, now time.Time) (string, error) {
	tmpl := req.SystemPrompt
	if tmpl == "" {
		tmpl = cfg.SystemTemplate
	}
	if tmpl == "" {
		t, err := prompt.Template(prompt.Subagent)
		if err != nil {
			return "", err
		}
		tmpl = t
	}
	vars := prompt.SubagentVars(cwd, modelID, now, req.DenyPermissions)
	text, err := prompt.Render(tmpl, vars)
	if err != nil {
		return "", fmt.Errorf("the child's system prompt: %w", err)
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(text, "\n"))
	if names, err := prompt.Variables(tmpl); err == nil && !slices.Contains(names, prompt.VarPermissions) {
		b.WriteString("\n\n")
		b.WriteString(vars[prompt.VarPermissions])
	}
	if req.Persona != "" {
		b.WriteString("\n\n# Instructions for this task\n\n")
		b.WriteString(req.Persona)
	}
	if !cfg.SkipProjectInstructions {
		if pi, err := prompt.ProjectInstructions(cwd); err == nil && pi != "" {
			b.WriteString("\n\n")
			b.WriteString(pi)
		}
	}
	b.WriteString("\n")
	return b.String(), nil
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
