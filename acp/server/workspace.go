// This file gives each session what its workspace defines: the agent
// definitions' tools (subagents/definition) and the slash commands
// (prompt/commands), kept in step with the files at session setup and at
// the start of each turn, and the commands run when a prompt is one.

package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/prompt/commands"
	"github.com/dshd/dshd/subagents/definition"
	"github.com/dshd/dshd/tools/subagent"
)

// wsState is what one session's workspace defines for it.
type wsState struct {
	defs *definition.Workspace // nil when the daemon reads no definitions
	cmds *commands.Catalog
	// pending are the mistakes found at setup, shown after the setup's
	// response; shown are the mistakes last shown, so each change of them
	// is shown once. Both are used by setup and then by the turns, one at
	// a time.
	pending []mistake
	shown   string
}

// openWorkspace reads cwd's definitions and commands for a new session;
// the mistakes it returns are for the user.
func (c *Conn) openWorkspace(cwd string) (*wsState, []mistake) {
	o := &c.srv.opts
	ws := &wsState{cmds: commands.NewCatalog(append(commands.WorkspaceSources(cwd), o.UserCommands...), o.Commands)}
	var errs []*definition.Error
	if o.Definitions != nil {
		ws.defs, errs = o.Definitions.Open(cwd)
	}
	mistakes := ws.mistakes(errs, nil)
	ws.shown = joinMistakes(mistakes)
	return ws, mistakes
}

// checkTools adds to the mistakes found at setup those of the command
// files' allowed-tools, which need s's tools.
func (ws *wsState) checkTools(s *session.Session) {
	ws.pending = append(ws.pending, ws.toolMistakes(s)...)
	ws.shown = joinMistakes(ws.pending)
}

// toolMistakes are the command files' allowed-tools names that name none
// of s's tools; none without s.
func (ws *wsState) toolMistakes(s *session.Session) []mistake {
	if s == nil {
		return nil
	}
	var names []string
	for _, t := range s.OfferedTools() {
		names = append(names, t.Name())
	}
	var out []mistake
	for _, e := range ws.cmds.ToolErrors(names) {
		out = append(out, mistake{"command file", e.Error()})
	}
	return out
}

// close releases the session's hold on its workspace's definitions.
func (ws *wsState) close() {
	if ws != nil && ws.defs != nil {
		ws.defs.Close()
	}
}

// workspace returns a session's state.
func (c *Conn) workspace(id acp.SessionID) *wsState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workspaces[id]
}

// reportMistakes logs each mistake and tells the user of them.
func (c *Conn) reportMistakes(s *session.Session, mistakes []mistake) {
	id := acp.SessionID(s.ID())
	for _, m := range mistakes {
		c.log.Warn(m.kind+" rejected", "session", id, "err", m.text)
		c.Warn(id, Warning{Title: m.text})
	}
}

// warnInstructions tells the user of s what became of its AGENTS.md, once
// for each version of the file: not used (and why), or cut at its bound.
// The session logs it.
func (c *Conn) warnInstructions(s *session.Session) {
	if w, ok := s.InstructionsWarning(); ok {
		c.Warn(acp.SessionID(s.ID()), Warning{Title: w.Title, Detail: w.Detail})
	}
}

// mistake is a definition or command file that cannot be used.
type mistake struct{ kind, text string }

// mistakes lists the workspace's mistakes: its definitions' errs, then
// its command files', then (with the session s) the names of its command
// files' allowed-tools that name no tool of s.
func (ws *wsState) mistakes(errs []*definition.Error, s *session.Session) []mistake {
	var out []mistake
	for _, e := range errs {
		out = append(out, mistake{"agent definition", e.Error()})
	}
	for _, e := range ws.cmds.Errors() {
		out = append(out, mistake{"command file", e.Error()})
	}
	return append(out, ws.toolMistakes(s)...)
}

func joinMistakes(ms []mistake) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.text + "\n")
	}
	return b.String()
}

// commandsUpdate is the available_commands_update of ws.
func commandsUpdate(ws *wsState) *acp.AvailableCommandsUpdate {
	u := &acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{}}
	for _, cmd := range ws.cmds.Commands() {
		ac := acp.AvailableCommand{Name: cmd.Name, Description: cmd.Description}
		if cmd.ArgumentHint != "" {
			ac.Input = &acp.AvailableCommandInput{Hint: cmd.ArgumentHint}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	return u
}

// refreshWorkspace brings a session up to date with its workspace's files
// at the start of a turn: definitions that changed re-register their
// tools (for every session of the workspace), new mistakes are shown, and
// changed commands are advertised again. An AGENTS.md changed into one
// that is cut or not used is told as well.
func (c *Conn) refreshWorkspace(s *session.Session, ws *wsState) {
	if ws == nil {
		return
	}
	c.warnInstructions(s)
	var errs []*definition.Error
	if ws.defs != nil {
		_, errs = ws.defs.Refresh()
	}
	changed := ws.cmds.Refresh()
	mistakes := ws.mistakes(errs, s)
	if joined := joinMistakes(mistakes); joined != ws.shown {
		ws.shown = joined
		c.reportMistakes(s, mistakes)
	}
	if changed {
		c.send(nil, acp.SessionID(s.ID()), commandsUpdate(ws))
	}
}

// slashCommand turns a prompt that is one of the session's commands into
// the turn's input, or runs it when it acts on the session itself (run is
// then set). A prompt that is no command is left as it is.
func slashCommand(ws *wsState, in agent.Input) (out agent.Input, run func(ctx context.Context, s *session.Session, say func(string), emit func(agent.Event)) (agent.Result, error)) {
	if ws == nil {
		return in, nil
	}
	name, args, ok := commands.Split(in.Text)
	if !ok {
		return in, nil
	}
	cmd, ok := ws.cmds.Lookup(name)
	if !ok {
		if bad, ok := ws.cmds.Rejected(name); ok {
			// The user's command could not be used: said, not sent to
			// the model as text.
			return in, func(context.Context, *session.Session, func(string), func(agent.Event)) (agent.Result, error) {
				return agent.Result{}, fmt.Errorf("/%s could not be used: %w", name, bad)
			}
		}
		return in, nil
	}
	switch {
	case cmd.Name == commands.Compact && cmd.Builtin():
		return in, func(ctx context.Context, s *session.Session, say func(string), emit func(agent.Event)) (agent.Result, error) {
			usage, err := s.Agent().Compact(ctx, args, emit)
			switch {
			case errors.Is(err, agent.ErrNothingToCompact):
				say("There is no conversation to compact yet.")
			case err != nil:
				if ctx.Err() != nil {
					return agent.Result{StopReason: agent.StopCancelled}, nil
				}
				return agent.Result{}, err
			default:
				say("The conversation was compacted: it continues from a summary of what came before.")
			}
			return agent.Result{StopReason: agent.StopEndTurn, Usage: usage}, nil
		}
	case cmd.Name == commands.Agents && cmd.Builtin():
		return in, func(_ context.Context, s *session.Session, say func(string), _ func(agent.Event)) (agent.Result, error) {
			say(subagent.DescribeTools(s.OfferedTools()))
			return agent.Result{StopReason: agent.StopEndTurn}, nil
		}
	case cmd.Name == commands.Tasks && cmd.Builtin():
		return in, func(_ context.Context, s *session.Session, say func(string), _ func(agent.Event)) (agent.Result, error) {
			say(s.Tasks().Describe())
			return agent.Result{StopReason: agent.StopEndTurn}, nil
		}
	case cmd.Builtin():
		text, _ := commands.BuiltinPrompt(cmd.Name, args)
		in.Text = text
	default:
		in.Text = cmd.Expand(args)
		in.Model = cmd.Model
		if len(cmd.AllowedTools) > 0 {
			in.Tools = cmd.AllowedTools
		}
	}
	return in, nil
}
