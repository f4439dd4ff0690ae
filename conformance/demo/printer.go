// This file is the demo's ACP client: it prints the streamed updates as an
// editor would show them and answers permission questions.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/internal/noeditor"
)

// printer is the demo's acp.Client.
type printer struct {
	// The demo offers no editor file system, terminals or elicitation:
	// dshd then uses the local disk and runs commands itself.
	noeditor.Methods

	mu    sync.Mutex
	w     io.Writer
	color bool
	root  acp.SessionID

	open    string // the session+kind whose text line is open, "" if none
	titles  map[acp.ToolCallID]string
	kids    map[acp.SessionID]string // child session → title
	titled  bool
	lastRun map[acp.SessionID]string // last state shown per child
	partial map[string]string        // a subagent's unfinished text line
	num     map[acp.SessionID]int    // subagent numbers, in announcement order
}

func newPrinter(f *os.File) *printer {
	p := &printer{w: f, titles: map[acp.ToolCallID]string{}, kids: map[acp.SessionID]string{}, lastRun: map[acp.SessionID]string{}, partial: map[string]string{}, num: map[acp.SessionID]int{}}
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == "" {
		p.color = true
	}
	return p
}

const (
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	cyan   = "\x1b[36m"
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	reset  = "\x1b[0m"
)

func (p *printer) paint(style, s string) string {
	if !p.color || s == "" {
		return s
	}
	return style + s + reset
}

// endLine closes an open text line.
func (p *printer) endLine() {
	if p.open != "" {
		fmt.Fprintln(p.w)
		p.open = ""
	}
}

// line prints one whole line with the indent of session sid.
func (p *printer) line(sid acp.SessionID, s string) {
	p.endLine()
	fmt.Fprintln(p.w, p.indent(sid)+s)
}

func (p *printer) indent(sid acp.SessionID) string {
	if sid == p.root || sid == "" {
		return "  "
	}
	return fmt.Sprintf("    %s ", p.paint(dim, fmt.Sprintf("#%d │", p.num[sid])))
}

func (p *printer) header(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	fmt.Fprintln(p.w, p.paint(bold, fmt.Sprintf(format, args...)))
}

func (p *printer) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	fmt.Fprintln(p.w, p.paint(dim, "· "+fmt.Sprintf(format, args...)))
}

func (p *printer) user(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	fmt.Fprintln(p.w)
	fmt.Fprintln(p.w, p.paint(bold, "▶ you: ")+text)
}

func (p *printer) stop(r acp.StopReason) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sid := range p.kids {
		p.flush(sid)
	}
	p.endLine()
	fmt.Fprintln(p.w, p.paint(dim, "■ stop reason: ")+string(r))
}

// text streams a chunk; kind is "msg" or "thought". The lead session
// streams inline; subagents, which run in parallel, print whole lines.
func (p *printer) text(sid acp.SessionID, kind, s string) {
	if sid != p.root {
		key := string(sid) + "\x00" + kind
		buf := p.partial[key] + s
		for {
			i := strings.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			p.textLine(sid, kind, buf[:i])
			buf = buf[i+1:]
		}
		p.partial[key] = buf
		return
	}
	key := string(sid) + "\x00" + kind
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			p.endLine()
		}
		if part == "" {
			continue
		}
		if p.open != key {
			p.endLine()
			prefix := p.indent(sid)
			if kind == "thought" {
				prefix += p.paint(dim, "(thinking) ")
			}
			fmt.Fprint(p.w, prefix)
			p.open = key
		}
		if kind == "thought" {
			part = p.paint(dim, part)
		}
		fmt.Fprint(p.w, part)
	}
}

// textLine prints one whole line of a subagent's text.
func (p *printer) textLine(sid acp.SessionID, kind, s string) {
	if kind == "thought" {
		p.line(sid, p.paint(dim, "(thinking) "+s))
		return
	}
	p.line(sid, s)
}

// flush prints what a subagent streamed since its last full line.
func (p *printer) flush(sid acp.SessionID) {
	for _, kind := range []string{"thought", "msg"} {
		key := string(sid) + "\x00" + kind
		if rest := p.partial[key]; rest != "" {
			p.textLine(sid, kind, rest)
			delete(p.partial, key)
		}
	}
}

// SessionUpdate prints one update.
func (p *printer) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	sid := n.SessionID
	switch n.Update.(type) {
	case *acp.AgentMessageChunk, *acp.AgentThoughtChunk:
	default:
		p.flush(sid)
	}
	switch u := n.Update.(type) {
	case *acp.AgentMessageChunk:
		if t, ok := u.Content.(*acp.TextContent); ok {
			p.text(sid, "msg", t.Text)
		}
	case *acp.AgentThoughtChunk:
		if t, ok := u.Content.(*acp.TextContent); ok {
			p.text(sid, "thought", t.Text)
		}
	case *acp.ToolCall:
		p.titles[u.ToolCallID] = u.Title
		kind := ""
		if u.Kind != "" {
			kind = p.paint(dim, " ["+string(u.Kind)+"]")
		}
		p.line(sid, p.paint(cyan, "⏺ "+u.Title)+kind)
	case *acp.ToolCallUpdate:
		p.toolUpdate(sid, u)
	case *acp.Plan:
		p.line(sid, p.paint(cyan, "plan:"))
		for _, e := range u.Entries {
			mark := map[acp.PlanEntryStatus]string{acp.PlanEntryStatus("completed"): "[x]", acp.PlanEntryStatus("in_progress"): "[~]"}[e.Status]
			if mark == "" {
				mark = "[ ]"
			}
			p.line(sid, fmt.Sprintf("  %s %s %s", mark, e.Content, p.paint(dim, "("+string(e.Priority)+")")))
		}
	case *acp.SubagentUpdate:
		p.subagent(sid, u)
	case *acp.SessionInfoUpdate:
		if title, ok := u.Title.Get(); ok && !p.titled && sid == p.root {
			p.titled = true
			p.line(sid, p.paint(dim, "(session title: "+title+")"))
		}
	case *acp.SessionMessage:
		if content, ok := u.Content.Get(); ok && u.SenderSessionID.IsSet() && sid != p.root {
			var b strings.Builder
			for _, c := range content {
				if t, ok := c.(*acp.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			p.line(sid, p.paint(dim, "task: "+oneLine(b.String(), 90)))
		}
	}
	return nil
}

func (p *printer) toolUpdate(sid acp.SessionID, u *acp.ToolCallUpdate) {
	if u.Title != "" {
		p.titles[u.ToolCallID] = u.Title
	}
	title := p.titles[u.ToolCallID]
	switch u.Status {
	case acp.ToolCallStatusCompleted:
		p.line(sid, p.paint(green, "  ✓ ")+title)
	case acp.ToolCallStatusFailed:
		p.line(sid, p.paint(red, "  ✗ ")+title)
	default:
		return
	}
	for _, c := range u.Content {
		switch c := c.(type) {
		case *acp.Diff:
			old := ""
			if c.OldText != nil {
				old = *c.OldText
			}
			p.diff(sid, c.Path, old, c.NewText)
		case *acp.ToolContent:
			if t, ok := c.Content.(*acp.TextContent); ok {
				shown := 0
				for _, l := range strings.Split(strings.TrimRight(t.Text, "\n"), "\n") {
					if strings.HasPrefix(l, "```") {
						continue // a markdown fence for the model
					}
					if shown == 4 {
						p.line(sid, p.paint(dim, "    …"))
						break
					}
					p.line(sid, p.paint(dim, "    "+oneLine(l, 100)))
					shown++
				}
			}
		}
	}
}

// diff prints the lines that changed.
func (p *printer) diff(sid acp.SessionID, path, old, new string) {
	p.line(sid, p.paint(dim, "    "+path))
	ol, nl := strings.Split(old, "\n"), strings.Split(new, "\n")
	for i := 0; i < max(len(ol), len(nl)); i++ {
		var a, b string
		if i < len(ol) {
			a = ol[i]
		}
		if i < len(nl) {
			b = nl[i]
		}
		if a == b {
			continue
		}
		if i < len(ol) {
			p.line(sid, p.paint(red, "    - "+a))
		}
		if i < len(nl) {
			p.line(sid, p.paint(green, "    + "+b))
		}
	}
}

func (p *printer) subagent(parent acp.SessionID, u *acp.SubagentUpdate) {
	if title, ok := u.Title.Get(); ok {
		if d, ok := u.Description.Get(); ok && d != "" && d != title {
			title += " (" + d + ")"
		}
		if _, known := p.kids[u.SessionID]; !known {
			p.kids[u.SessionID] = title
			p.num[u.SessionID] = len(p.num) + 1
			p.line(parent, p.paint(cyan, fmt.Sprintf("↳ subagent #%d started: ", p.num[u.SessionID]))+title+p.paint(dim, " (session "+string(u.SessionID)+")"))
		}
	}
	st, ok := u.State.Get()
	if !ok {
		return
	}
	title := p.kids[u.SessionID]
	if _, idle := st.(*acp.IdleState); idle {
		p.flush(u.SessionID)
	}
	var shown string
	switch s := st.(type) {
	case *acp.RunningState:
		shown = "running"
	case *acp.RequiresActionState:
		shown = "waiting for permission"
	case *acp.IdleState:
		shown = "finished: " + string(s.StopReason)
		if s.Error != nil {
			shown += " (" + s.Error.Message + ")"
		}
	default:
		return
	}
	if p.lastRun[u.SessionID] == shown {
		return
	}
	p.lastRun[u.SessionID] = shown
	if shown == "running" {
		return // implied by the start line
	}
	p.line(parent, p.paint(cyan, fmt.Sprintf("↳ subagent #%d ", p.num[u.SessionID]))+title+": "+shown)
}

// RequestPermission prints the question and allows once.
func (p *printer) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	title := req.ToolCall.Title
	if title == "" {
		title = p.titles[req.ToolCall.ToolCallID]
	}
	var names []string
	choice := ""
	for _, o := range req.Options {
		names = append(names, o.Name)
		if o.Kind == acp.PermissionAllowOnce && choice == "" {
			choice = o.OptionID
		}
	}
	p.line(req.SessionID, p.paint(yellow, "? permission: ")+title+p.paint(dim, " ["+strings.Join(names, " / ")+"]"))
	if choice == "" {
		p.line(req.SessionID, p.paint(yellow, "  → no allow option; cancelling"))
		return &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil
	}
	p.line(req.SessionID, p.paint(yellow, "  → the demo answers: allow once"))
	return &acp.RequestPermissionResponse{Outcome: acp.Selected(choice)}, nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
