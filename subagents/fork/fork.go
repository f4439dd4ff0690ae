// This file implements the fork provider on the shared in-process
// machinery: what makes a fork a fork is here — the parent's completed
// turns shared as the child's history, the parent's own system prompt,
// and the framing of the task.

package fork

import (
	"fmt"
	"strings"
	"time"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/internal/inproc"
)

// Name is the provider's name.
const Name = "fork"

// Options configure the provider. The zero value (or nil) is usable.
type Options = subagents.InProcessOptions

// New returns the fork provider.
func New(opts *Options) subagents.Provider {
	var o Options
	if opts != nil {
		o = *opts
	}
	return inproc.New(inproc.Config{
		Name:             Name,
		Inherit:          true,
		Begin:            begin,
		InProcessOptions: o,
	})
}

// begin starts a fork from the parent's completed turns — shared, never
// copied, and with their token estimate, so nothing walks them — under the
// parent's system prompt, kept byte-identical so the shared prefix stays
// cacheable; the task arrives framed as the child's next user message.
func begin(parent *session.Session, req subagents.StartRequest, modelID string) (inproc.Beginning, error) {
	if req.SystemPrompt != "" {
		// The child keeps the parent's system prompt (the shared prefix),
		// so the binding's own arrives as the task's instructions.
		text, err := prompt.Render(req.SystemPrompt, prompt.SubagentVars(parent.Cwd(), modelID, time.Now(), req.DenyPermissions))
		if err != nil {
			return inproc.Beginning{}, fmt.Errorf("the child's instructions: %w", err)
		}
		req.Persona = strings.TrimSpace(strings.TrimSpace(text) + "\n\n" + req.Persona)
	}
	return inproc.Beginning{
		History: parent.Agent().CompletedHistory(),
		System:  parent.SystemPrompt(),
		Frame:   frame(req),
	}, nil
}

// forkFrame tells a forked child, whose context is the parent's
// conversation, that it is now a subagent with one task.
const forkFrame = `You are now a subagent forked from this conversation. Everything above is the conversation so far, which you share with the agent that started you; that agent is waiting for you to do the one task below, and it will receive only your final message.

Do that task, using what you already know from the conversation, and nothing beyond it: do not carry on with the earlier work. Nobody can answer questions while you run; when something is ambiguous, make the most reasonable choice and say so. End with a complete, self-contained report: the outcome first (done, partly done, or not possible), then the facts the other agent needs (findings with path:line references, files changed and how, how you verified them), and anything you could not do and why.`

// taskHeading introduces the task after the framing.
const taskHeading = "\n\n# Task\n\n"

// frame is what comes before the task in a fork's first message: the
// fork framing, the fixed-permissions note when the child's permissions
// are pinned to deny (its system prompt, the parent's, cannot say so),
// and the persona (with the binding's system prompt, rendered).
func frame(req subagents.StartRequest) string {
	if !req.DenyPermissions && req.Persona == "" {
		return forkFrame + taskHeading // a constant: Start builds nothing
	}
	var b strings.Builder
	b.WriteString(forkFrame)
	if req.DenyPermissions {
		b.WriteString("\n\n")
		b.WriteString(prompt.FixedPermissionsNote)
	}
	if req.Persona != "" {
		b.WriteString("\n\n# Instructions for this task\n\n")
		b.WriteString(req.Persona)
	}
	b.WriteString(taskHeading)
	return b.String()
}
