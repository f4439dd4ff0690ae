// This file is the one way a warning that is not part of the conversation
// reaches the user: an MCP server that failed to start, a definition file
// that was rejected, a limit that was hit, a sandbox fallback.

package server

import (
	"github.com/dshd/dshd/acp"
)

// Warning is something the user should know that is not part of the
// conversation. The model never sees it and the session's transcript does
// not keep it.
type Warning struct {
	// Severity is acp.NoticeWarning when empty; acp.NoticeInfo or
	// acp.NoticeError otherwise.
	Severity string
	// Title is plain text that stands alone ("MCP server "docs" is
	// unavailable"); required.
	Title string
	// Detail, when set, says why or what to do, in plain text.
	Detail string
}

// Warn shows w to the user of session id, an open session of this
// connection (a client session or an exposed subagent's). Every warning
// outside the conversation goes through it, whoever finds it.
//
// A client that advertised session.notices gets a `notice` update. Any
// other client gets the warning as before: an agent_message_chunk reading
// "⚠ Title: Detail". Neither is recorded, so a session/load never replays
// it (notices are live events, rfd:session-notices), and neither is ever
// part of the model's context. Warn only writes the update, so it is
// safe from any goroutine, mid-turn too.
func (c *Conn) Warn(id acp.SessionID, w Warning) {
	if w.Title == "" {
		return
	}
	if w.Severity == "" {
		w.Severity = acp.NoticeWarning
	}
	if c.clientCaps().Session.Notices != nil {
		c.send(nil, id, &acp.Notice{Severity: w.Severity, Title: w.Title, Description: w.Detail})
		return
	}
	text := "⚠ " + w.Title
	if w.Detail != "" {
		text += ": " + w.Detail
	}
	c.send(nil, id, &acp.AgentMessageChunk{Content: acp.TextBlock(text + "\n")})
}
