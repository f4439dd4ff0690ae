// This file renders session updates for a person: the answer as text,
// tool activity as one line per start and end (a failure with its
// reason), and, for a stored transcript, the user's prompts. `dshd
// prompt` and `dshd sessions show` print sessions the same way.

package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dshd/dshd/acp"
)

// reasonWidth caps a failed tool's reason on its line.
const reasonWidth = 200

// renderer prints session updates. It is not safe for concurrent use.
type renderer struct {
	// out gets the conversation's text; tools gets the tool activity.
	out, tools io.Writer
	// prompts shows the user's prompts ("> …"), which a live turn does
	// not echo but a stored transcript holds.
	prompts bool

	midLine bool // out so far ends without a newline
	printed bool // something was written to out
	titles  map[acp.ToolCallID]string
	inUser  acp.MessageID // the user message being printed, if any
}

// update prints n. It reports whether n came from the agent (an answer,
// a thought or a tool call), as opposed to bookkeeping (usage, titles).
func (r *renderer) update(n *acp.SessionNotification) (agent bool) {
	switch u := n.Update.(type) {
	case *acp.UserMessageChunk:
		if !r.prompts {
			return false
		}
		if t, ok := u.Content.(*acp.TextContent); ok {
			if r.inUser == "" || r.inUser != u.MessageID {
				r.endLine()
				if r.printed {
					io.WriteString(r.out, "\n")
				}
				io.WriteString(r.out, "> ")
				r.inUser = u.MessageID
			}
			r.write(strings.ReplaceAll(t.Text, "\n", "\n> "))
		}
		return false
	case *acp.AgentMessageChunk:
		if r.inUser != "" {
			r.endLine()
			r.inUser = ""
		}
		if t, ok := u.Content.(*acp.TextContent); ok {
			r.write(t.Text)
		}
		return true
	case *acp.AgentThoughtChunk:
		return true
	case *acp.Notice:
		r.beforeTools()
		if u.Description != "" {
			fmt.Fprintf(r.tools, "⚠ %s: %s\n", u.Title, u.Description)
		} else {
			fmt.Fprintf(r.tools, "⚠ %s\n", u.Title)
		}
		return false
	case *acp.ToolCall:
		r.beforeTools()
		if r.titles == nil {
			r.titles = map[acp.ToolCallID]string{}
		}
		r.titles[u.ToolCallID] = u.Title
		fmt.Fprintf(r.tools, "→ %s\n", u.Title)
		return true
	case *acp.ToolCallUpdate:
		if u.Title != "" {
			if r.titles == nil {
				r.titles = map[acp.ToolCallID]string{}
			}
			r.titles[u.ToolCallID] = u.Title
		}
		switch u.Status {
		case acp.ToolCallStatusCompleted:
			r.beforeTools()
			fmt.Fprintf(r.tools, "✓ %s\n", r.titles[u.ToolCallID])
		case acp.ToolCallStatusFailed:
			r.beforeTools()
			if why := failureText(u.Content); why != "" {
				fmt.Fprintf(r.tools, "✗ %s: %s\n", r.titles[u.ToolCallID], why)
			} else {
				fmt.Fprintf(r.tools, "✗ %s\n", r.titles[u.ToolCallID])
			}
		}
		return true
	}
	return false
}

func (r *renderer) write(text string) {
	if text == "" {
		return
	}
	io.WriteString(r.out, text)
	r.midLine = !strings.HasSuffix(text, "\n")
	r.printed = true
}

// endLine ends the text on out with a newline if it lacks one.
func (r *renderer) endLine() {
	if r.midLine {
		io.WriteString(r.out, "\n")
		r.midLine = false
	}
}

// beforeTools ends the answer's line first when tool lines go to the same
// place, so a tool line never starts in the middle of the answer.
func (r *renderer) beforeTools() {
	if r.tools == r.out {
		r.endLine()
		r.inUser = ""
	}
}

// failureText is the reason in a failed tool call's content: its first
// text on one line, its lines joined (a reason often ends a line with
// "its stderr ends with:" and gives it on the next), cut to reasonWidth.
func failureText(content []acp.ToolCallContent) string {
	for _, c := range content {
		tc, ok := c.(*acp.ToolContent)
		if !ok {
			continue
		}
		t, ok := tc.Content.(*acp.TextContent)
		if !ok {
			continue
		}
		s := strings.Join(strings.Fields(t.Text), " ")
		if utf8.RuneCountInString(s) > reasonWidth {
			s = string([]rune(s)[:reasonWidth-1]) + "…"
		}
		if s != "" {
			return s
		}
	}
	return ""
}
