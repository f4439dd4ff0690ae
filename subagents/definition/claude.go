// This file reads Claude Code's agent format: its tool names and the
// front matter keys dshd has a meaning for.

package definition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dshd/dshd/internal/frontmatter"
	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/tools/subagent"
)

// claudeTools maps Claude Code's tool names onto dshd's.
var claudeTools = map[string]string{
	"Read":      "read_file",
	"Write":     "write_file",
	"Edit":      "edit_file",
	"MultiEdit": "edit_file",
	"Bash":      "run_command",
	"Grep":      "grep",
	"Glob":      "glob",
	"LS":        "list_dir",
	"TodoWrite": "plan",
	"Task":      subagent.DefaultToolName,
	"Agent":     subagent.DefaultToolName,
}

// claudeWithout are Claude Code's tools dshd has no counterpart for.
var claudeWithout = []string{"WebFetch", "WebSearch", "NotebookEdit", "NotebookRead", "BashOutput", "KillShell", "KillBash",
	"SlashCommand", "ExitPlanMode", "AskUserQuestion", "Skill"}

// mapTools turns a file's tool names into dshd's. In Claude Code's
// dialect its names are mapped (Task(NAME) and Agent(NAME) name the
// subagent tool NAME), dshd's own names pass, and a Claude Code tool dshd
// lacks is reported; in dshd's dialect a Claude Code name is reported
// with the dshd name it means. Whether a dshd name exists is [Check]'s
// question.
func mapTools(names []string, dialect Dialect) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if dialect == ClaudeCode {
			if m, ok := claudeTools[n]; ok {
				n = m
			} else if inner, ok := delegateTarget(n); ok {
				n = inner
			} else if slices.Contains(claudeWithout, n) {
				return nil, fmt.Errorf("the Claude Code tool %s has no counterpart in dshd; remove it from the list", n)
			}
		} else if m, ok := claudeTools[n]; ok {
			return nil, fmt.Errorf("%q is a Claude Code tool name; dshd calls it %q (Claude Code's names are read only in .claude/agents)", n, m)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// delegateTarget reads Claude Code's Task(NAME) and Agent(NAME), which
// allow delegating to the agent NAME only.
func delegateTarget(n string) (string, bool) {
	for _, p := range []string{"Task(", "Agent("} {
		if inner, ok := strings.CutPrefix(n, p); ok && strings.HasSuffix(inner, ")") {
			return strings.TrimSpace(strings.TrimSuffix(inner, ")")), true
		}
	}
	return "", false
}

// claudeKeys are the keys of Claude Code's format dshd understands beyond
// its own, for messages.
var claudeKeys = []string{keyPermissionMode, keyColor}

// claudeField applies a key of Claude Code's format that dshd's format
// does not have. color is for Claude Code's display and means nothing
// here; permissionMode maps where dshd has the same meaning. Any other key
// is a feature dshd does not have, reported so nobody believes it works.
func claudeField(f frontmatter.Field, b *subagent.Binding) error {
	switch f.Key {
	case keyColor:
		return nil
	case keyPermissionMode:
		mode, err := f.String()
		if err != nil {
			return err
		}
		switch mode {
		case "default":
		case "dontAsk", "plan":
			// dontAsk denies what was not allowed beforehand; plan
			// explores without changing anything. Both are a child
			// whose permission requests are denied.
			b.DenyPermissions = true
		case "acceptEdits", "bypassPermissions":
			return f.Errorf("%s would give the agent more permission than the session that starts it; a dshd child asks its parent's permission (use default, dontAsk or plan)", mode)
		default:
			return f.Errorf("unknown permission mode %q (Claude Code's are default, acceptEdits, dontAsk, bypassPermissions and plan)", mode)
		}
		return nil
	}
	known := append(slices.Clone(dshdKeys), claudeKeys...)
	if hint := suggest.DidYouMean(f.Key, known); hint != "" {
		return f.Errorf("unknown key%s", hint)
	}
	return f.Errorf("dshd has no counterpart for Claude Code's %s; remove the key (dshd reads %s)", f.Key, strings.Join(known, ", "))
}
