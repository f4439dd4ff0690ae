// This file holds the helpers cases are written with: each one talks to
// the agent and ends the case with a clear message when the agent does not
// answer as the protocol requires.

package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// grace is how long a process gets to exit after its stdin closed.
func (t *T) grace() time.Duration { return 5 * time.Second }

// Text is a text content block.
func Text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// Init initializes c with the given clientCapabilities (nil: none) and
// returns the result.
func (t *T) Init(c *Client, caps map[string]any) json.RawMessage {
	if caps == nil {
		caps = map[string]any{}
	}
	var res json.RawMessage
	if err := c.Do(t.ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": clientInfo}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// Connect starts an agent and initializes it with caps (nil: none).
func (t *T) Connect(o *ClientOptions, caps map[string]any) *Client {
	c := t.Start(o)
	t.Init(c, caps)
	return c
}

// Reconnect shuts c's agent down and connects a fresh process, as a
// client coming back to its stored sessions does.
func (t *T) Reconnect(c *Client, o *ClientOptions, caps map[string]any) *Client {
	c.Shutdown(t.grace())
	return t.Connect(o, caps)
}

// Open starts an agent, initializes it with caps and opens a session in
// t.Cwd; it returns the client and the session id.
func (t *T) Open(o *ClientOptions, caps map[string]any) (*Client, string) {
	c := t.Connect(o, caps)
	return c, t.NewSession(c, t.Cwd)
}

// NewSession creates a session in cwd with no MCP servers.
func (t *T) NewSession(c *Client, cwd string) string {
	sid, _ := t.NewSessionResult(c, cwd)
	return sid
}

// NewSessionResult creates a session and also returns the whole result.
func (t *T) NewSessionResult(c *Client, cwd string) (string, json.RawMessage) {
	var res json.RawMessage
	if err := c.Do(t.ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &res); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := getString(res, "sessionId")
	if sid == "" {
		t.Fatalf("session/new returned no sessionId: %s", clip(res, 300))
	}
	return sid, res
}

// Turn is one prompt turn as seen on the wire.
type Turn struct {
	// Start is the seq of the prompt request line.
	Start int
	// Resp is the response line.
	Resp *Line
	// Stop is the stop reason ("" for an error response).
	Stop string
}

// SendPrompt sends session/prompt with one text block and returns its id
// and the seq of the request line.
func (t *T) SendPrompt(c *Client, sid, text string) (json.RawMessage, int) {
	return t.SendPromptBlocks(c, sid, Text(text))
}

// SendPromptBlocks sends session/prompt with the given blocks.
func (t *T) SendPromptBlocks(c *Client, sid string, blocks ...any) (json.RawMessage, int) {
	seq := c.Seq()
	return t.Send(c, "session/prompt", map[string]any{"sessionId": sid, "prompt": blocks}), seq
}

// Prompt runs a text prompt to its end.
func (t *T) Prompt(c *Client, sid, text string) Turn {
	id, seq := t.SendPrompt(c, sid, text)
	return t.Finish(c, id, seq)
}

// EndTurn runs a text prompt that must end with end_turn; its text names
// it in a failure.
func (t *T) EndTurn(c *Client, sid, text string) Turn {
	turn := t.Prompt(c, sid, text)
	t.WantStop(turn, "end_turn", text)
	return turn
}

// SendStreaming sends a text prompt and waits until the turn streams its
// first agent_message_chunk, so the turn is surely running.
func (t *T) SendStreaming(c *Client, sid, text string) (json.RawMessage, int) {
	id, seq := t.SendPrompt(c, sid, text)
	t.ExpectUpdate(c, seq, sid, "agent_message_chunk")
	return id, seq
}

// CancelTurn cancels sid and waits for the prompt sent earlier to end
// cancelled (what names it in a failure).
func (t *T) CancelTurn(c *Client, sid string, id json.RawMessage, seq int, what string) Turn {
	t.Cancel(c, sid)
	turn := t.Finish(c, id, seq)
	t.WantStop(turn, "cancelled", what)
	return turn
}

// Finish waits for the response of a prompt sent earlier.
func (t *T) Finish(c *Client, id json.RawMessage, seq int) Turn {
	l, err := c.Response(t.ctx, id)
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	turn := Turn{Start: seq, Resp: l}
	if l.Msg.Error == nil {
		turn.Stop = getString(l.Msg.Result, "stopReason")
	}
	return turn
}

// Expect waits for an agent message matching match, from seq on.
func (t *T) Expect(c *Client, seq int, what string, match func(*Msg) bool) *Line {
	l, err := c.AwaitMsg(t.ctx, seq, what, match)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return l
}

// ExpectUpdate waits for a session/update of the given kind for sid.
func (t *T) ExpectUpdate(c *Client, seq int, sid, kind string) *Line {
	return t.Expect(c, seq, fmt.Sprintf("a %s update for %s", kind, sid), func(m *Msg) bool {
		return m.Method == "session/update" && m.SessionID() == sid && m.UpdateKind() == kind
	})
}

// ExpectRequest waits for a request of the agent with the given method.
func (t *T) ExpectRequest(c *Client, seq int, method string) *Line {
	return t.Expect(c, seq, "a "+method+" request", func(m *Msg) bool { return m.IsRequest() && m.Method == method })
}

// Barrier makes sure everything the agent sent before it handled a fresh
// request is on record, and returns that request's answer's seq.
func (t *T) Barrier(c *Client) int {
	seq, err := c.Barrier(t.ctx)
	if err != nil {
		t.Fatalf("barrier: %v", err)
	}
	return seq
}

// Send sends a request and returns its id; failing to send it ends the
// case.
func (t *T) Send(c *Client, method string, params any) json.RawMessage {
	id, err := c.Send(method, params)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return id
}

// Response waits for the response to the request id; not getting one
// ends the case.
func (t *T) Response(c *Client, id json.RawMessage) *Line {
	l, err := c.Response(t.ctx, id)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return l
}

// Call sends a request and returns its response.
func (t *T) Call(c *Client, method string, params any) *Msg {
	m, err := c.Call(t.ctx, method, params)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return m
}

// Do calls method and decodes the result into out; an error response ends
// the case.
func (t *T) Do(c *Client, method string, params, out any) {
	if err := c.Do(t.ctx, method, params, out); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// Notify sends a notification; failing to send it ends the case.
func (t *T) Notify(c *Client, method string, params any) {
	if err := c.Notify(method, params); err != nil {
		t.Fatalf("%v", err)
	}
}

// Cancel sends session/cancel for sid.
func (t *T) Cancel(c *Client, sid string) {
	t.Notify(c, "session/cancel", map[string]any{"sessionId": sid})
}

// Reply answers a request of the agent; failing to send it ends the case.
func (t *T) Reply(c *Client, id json.RawMessage, result any) {
	if err := c.Reply(id, result); err != nil {
		t.Fatalf("%v", err)
	}
}

// WantEmpty calls method and checks that it answers {} (what names the
// call in a failure).
func (t *T) WantEmpty(c *Client, method string, params any, what string) {
	var res json.RawMessage
	t.Do(c, method, params, &res)
	if !isObject(res) {
		t.Errorf("%s answered %s, want {}", what, clip(res, 80))
	}
}

// WantQuiet checks that the agent sent sid no update from seq on, up to
// a barrier; what describes such an update in a failure.
func (t *T) WantQuiet(c *Client, sid string, seq int, what string) {
	end := t.Barrier(c)
	for _, l := range c.Updates(seq, sid) {
		if l.Seq < end {
			t.Errorf("%s: %s", what, clip(l.Raw, 200))
		}
	}
}

// WantError checks that m is an error response with the given code.
func (t *T) WantError(m *Msg, code int64, what string) bool {
	if m.Error == nil {
		t.Errorf("%s: want error %d, got result %s", what, code, clip(m.Result, 200))
		return false
	}
	if m.Error.Code != code {
		t.Errorf("%s: want error %d, got %v", what, code, m.Error)
		return false
	}
	return true
}

// WantStop checks a turn's stop reason.
func (t *T) WantStop(turn Turn, want, what string) {
	if turn.Resp.Msg.Error != nil {
		t.Fatalf("%s: want stopReason %q, got error %v", what, want, turn.Resp.Msg.Error)
	}
	if turn.Stop != want {
		t.Fatalf("%s: want stopReason %q, got %q", what, want, turn.Stop)
	}
}

// AgentText concatenates agent_message_chunk text for sid between seqs
// (to < 0: to the end).
func AgentText(c *Client, sid string, from, to int) string {
	return chunkText(c, sid, "agent_message_chunk", from, to)
}

func chunkText(c *Client, sid, kind string, from, to int) string {
	var b strings.Builder
	for _, l := range c.Updates(from, sid) {
		if to >= 0 && l.Seq >= to {
			break
		}
		if l.Msg.UpdateKind() == kind {
			b.WriteString(textOf(get(l.Msg.Update(), "content")))
		}
	}
	return b.String()
}

// ToolCalls returns the tool_call and tool_call_update payloads for sid,
// from seq on, grouped by toolCallId in arrival order.
func ToolCalls(c *Client, sid string, from int) (order []string, byID map[string][]json.RawMessage) {
	byID = map[string][]json.RawMessage{}
	for _, l := range c.Updates(from, sid) {
		k := l.Msg.UpdateKind()
		if k != "tool_call" && k != "tool_call_update" {
			continue
		}
		id := getString(l.Msg.Update(), "toolCallId")
		if _, ok := byID[id]; !ok {
			order = append(order, id)
		}
		byID[id] = append(byID[id], l.Msg.Update())
	}
	return order, byID
}

// statuses lists the statuses a tool call went through.
func statuses(updates []json.RawMessage) []string {
	var out []string
	for _, u := range updates {
		if s := getString(u, "status"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// toolText is the text content of a tool call's last update that has
// content.
func toolText(updates []json.RawMessage) string {
	text := ""
	for _, u := range updates {
		if c := get(u, "content"); c != nil && !isNull(c) {
			text = ""
			for _, it := range getArray(c) {
				if getString(it, "type") == "content" {
					text += textOf(get(it, "content"))
				}
			}
		}
	}
	return text
}

// cancelWhileAsked sends prompt, and when the agent asks for permission
// cancels the session and then answers the question cancelled, as a
// client does; the turn must end cancelled (what names it in a failure).
func (t *T) cancelWhileAsked(c *Client, sid, prompt, what string) {
	id, seq := t.SendPrompt(c, sid, prompt)
	req := t.ExpectRequest(c, seq, "session/request_permission")
	t.Cancel(c, sid)
	t.Reply(c, req.Msg.ID, permissionOutcome(req.Msg, "cancelled"))
	t.WantStop(t.Finish(c, id, seq), "cancelled", what)
}
