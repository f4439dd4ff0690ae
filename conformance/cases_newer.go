// This file holds the cases of what became stable after schema 1.21 —
// tool-call names, notices, compaction updates, boolean config options —
// and of the unstable features acp-v1 §25 asks dshd for: session/fork and
// the turn's usage in the prompt response (acp-v1 §23.1, §25).

package conformance

import (
	"encoding/json"
	"slices"
	"strings"
)

var (
	noticeCaps     = map[string]any{"session": map[string]any{"notices": map[string]any{}}}
	compactionCaps = map[string]any{"session": map[string]any{"compaction": map[string]any{}}}
	booleanCaps    = map[string]any{"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}}
)

// missingMCP is a stdio MCP server whose command does not exist: dshd
// warns about it and goes on without it.
var missingMCP = []any{map[string]any{"name": "missing-docs", "command": "/nonexistent/docs-mcp", "args": []any{}, "env": []any{}}}

// load loads sid in t.Cwd on c, failing the case unless it succeeds, and
// returns the sequence number before the request and the answer's line.
func (t *T) load(c *Client, sid string) (seq int, resp *Line) {
	seq = c.Seq()
	id := t.Send(c, "session/load", map[string]any{"sessionId": sid, "cwd": t.Cwd, "mcpServers": []any{}})
	resp, err := c.Response(t.ctx, id)
	switch {
	case err != nil:
		t.Fatalf("session/load: %v", err)
	case resp.Msg.Error != nil:
		t.Fatalf("session/load: %v", resp.Msg.Error)
	}
	return seq, resp
}

// loadReplay loads sid on c and returns the updates before its answer.
func (t *T) loadReplay(c *Client, sid string) []*Line {
	seq, resp := t.load(c, sid)
	var out []*Line
	for _, l := range c.Updates(seq, "") {
		if l.Seq < resp.Seq {
			out = append(out, l)
		}
	}
	return out
}

func kinds(ls []*Line, kind string) []*Line {
	var out []*Line
	for _, l := range ls {
		if l.Msg.UpdateKind() == kind {
			out = append(out, l)
		}
	}
	return out
}

// userPrompts are the texts of the user_message_chunk lines among ls.
func userPrompts(ls []*Line) []string {
	var out []string
	for _, l := range kinds(ls, "user_message_chunk") {
		out = append(out, textOf(get(l.Msg.Update(), "content")))
	}
	return out
}

// configOption finds option id in a configOptions array.
func configOption(opts []json.RawMessage, id string) json.RawMessage {
	for _, o := range opts {
		if getString(o, "id") == id {
			return o
		}
	}
	return nil
}

func newerCases() []*Case {
	return []*Case{
		{
			ID:    "toolcall/named",
			Name:  "every tool_call and tool_call_update names its tool, the same name throughout, a subagent's binding included",
			Items: []string{"extra#2"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), nil)
				for _, p := range []string{"conf-write", "conf-spawn"} {
					t.EndTurn(c, sid, p)
				}
				order, byID := ToolCalls(c, sid, 0)
				names := map[string]bool{}
				for _, id := range order {
					first := getString(byID[id][0], "name")
					for _, u := range byID[id] {
						if n := getString(u, "name"); n == "" || n != first {
							t.Errorf("tool call %s: a %s without its name (or with another): %s", id, getString(u, "sessionUpdate"), clip(u, 200))
						}
					}
					names[first] = true
				}
				for _, want := range []string{"write_file", "subagent"} {
					if !names[want] {
						t.Errorf("no tool call named %q; names: %v", want, names)
					}
				}
			},
		},
		{
			ID:    "notice/only-advertised",
			Name:  "a warning outside the conversation (an MCP server that cannot start) is a notice for a client with session.notices, an agent message for any other, and never replayed",
			Items: []string{"extra#3"},
			Dshd:  true,
			Run: func(t *T) {
				c := t.Connect(nil, noticeCaps)
				var res json.RawMessage
				t.Do(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": missingMCP}, &res)
				sid := getString(res, "sessionId")
				n := t.ExpectUpdate(c, 0, sid, "notice")
				if !strings.Contains(getString(n.Msg.Update(), "title"), "missing-docs") {
					t.Errorf("the notice does not name the server: %s", clip(n.Raw, 300))
				}
				t.Barrier(c)
				if txt := AgentText(c, sid, 0, -1); strings.Contains(txt, "⚠") {
					t.Errorf("a notice-aware client also got the warning as a message: %q", txt)
				}
				t.WantStop(t.Prompt(c, sid, "after the warning"), "end_turn", "a prompt")

				c2 := t.Reconnect(c, nil, noticeCaps)
				if ns := kinds(t.loadReplay(c2, sid), "notice"); len(ns) > 0 {
					t.Errorf("the replay has a notice: %s", clip(ns[0].Raw, 200))
				}

				c3 := t.Reconnect(c2, nil, nil)
				t.Do(c3, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": missingMCP}, &res)
				sid3 := getString(res, "sessionId")
				t.Expect(c3, 0, "the warning as an agent message", func(m *Msg) bool {
					return m.SessionID() == sid3 && m.UpdateKind() == "agent_message_chunk" && strings.Contains(textOf(get(m.Update(), "content")), "missing-docs")
				})
				t.Barrier(c3) // the monitor flags any notice to this client
			},
		},
		{
			ID:    "compaction/shown-and-replayed",
			Name:  "a compaction is a compaction_update in_progress then completed (with its summary) for a client with session.compaction, replayed completed on load, and invisible to any other client",
			Items: []string{"extra#4"},
			Dshd:  true,
			Run: func(t *T) {
				o := scripted("", nil)
				o.Args = []string{"--context-window", "40"}
				c := t.Connect(o, compactionCaps)
				sid := t.NewSession(c, t.Cwd)
				t.WantStop(t.Prompt(c, sid, "first question"), "end_turn", "the first turn")
				turn := t.Prompt(c, sid, "second question")
				t.WantStop(turn, "end_turn", "the second turn")
				cs := kinds(c.Updates(turn.Start, sid), "compaction_update")
				if len(cs) != 2 {
					t.Fatalf("%d compaction updates in the turn after a full window, want in_progress then completed", len(cs))
				}
				a, b := cs[0].Msg.Update(), cs[1].Msg.Update()
				if getString(a, "status") != "in_progress" || getString(b, "status") != "completed" || getString(a, "compactionId") == "" || getString(a, "compactionId") != getString(b, "compactionId") {
					t.Errorf("compaction updates %s then %s", clip(a, 200), clip(b, 200))
				}
				if sum := getArray(b, "summary"); len(sum) == 0 || !strings.Contains(textOf(sum[0]), "Summary") {
					t.Errorf("the completed compaction has no summary: %s", clip(b, 300))
				}
				if cs[1].Seq > turn.Resp.Seq {
					t.Errorf("the compaction ended after the turn's answer")
				}

				c2 := t.Reconnect(c, o, compactionCaps)
				replay := t.loadReplay(c2, sid)
				rc := kinds(replay, "compaction_update")
				if len(rc) != 1 || getString(rc[0].Msg.Update(), "status") != "completed" || getString(rc[0].Msg.Update(), "compactionId") != getString(a, "compactionId") {
					t.Errorf("the replay has %d compaction updates, want the completed one", len(rc))
				} else if users := userPrompts(replay); len(users) != 2 {
					t.Errorf("the replay has prompts %q", users)
				}

				c3 := t.Reconnect(c2, o, nil)
				t.loadReplay(c3, sid)
				sid3 := t.NewSession(c3, t.Cwd)
				t.Prompt(c3, sid3, "first question")
				t.Prompt(c3, sid3, "second question")
				t.Barrier(c3) // the monitor flags any compaction update to this client
			},
		},
		{
			ID:    "config/thinking-option",
			Name:  "the thinking option (thought_level) is boolean for a client with session.configOptions.boolean and an on/off select for any other, and turning it off stops the model's thoughts",
			Items: []string{"extra#5", "acp-v1#62", "acp-v1#63"},
			Dshd:  true,
			Run: func(t *T) {
				for _, form := range []struct {
					caps      map[string]any
					kind      string
					off, on   any
					valueType string
				}{
					{booleanCaps, "boolean", false, true, "boolean"},
					{nil, "select", "off", "on", ""},
				} {
					c := t.Connect(scripted("", nil), form.caps)
					sid, res := t.NewSessionResult(c, t.Cwd)
					opt := configOption(getArray(res, "configOptions"), "thinking")
					if getString(opt, "type") != form.kind || getString(opt, "category") != "thought_level" {
						t.Fatalf("the thinking option for this client is %s, want a %s thought_level option", clip(opt, 300), form.kind)
					}
					set := func(v any) json.RawMessage {
						p := map[string]any{"sessionId": sid, "configId": "thinking", "value": v}
						if form.valueType != "" {
							p["type"] = form.valueType
						}
						var r json.RawMessage
						t.Do(c, "session/set_config_option", p, &r)
						return configOption(getArray(r, "configOptions"), "thinking")
					}
					if got := set(form.off); string(get(got, "currentValue")) != string(mustJSON(form.off)) {
						t.Errorf("%s: after turning it off the option reads %s", form.kind, clip(got, 200))
					}
					turn := t.Prompt(c, sid, "conf-think")
					if n := len(kinds(c.Updates(turn.Start, sid), "agent_thought_chunk")); n != 0 {
						t.Errorf("%s: %d thought chunks with thinking off", form.kind, n)
					}
					set(form.on)
					turn = t.Prompt(c, sid, "conf-think")
					if n := len(kinds(c.Updates(turn.Start, sid), "agent_thought_chunk")); n == 0 {
						t.Errorf("%s: no thought chunks with thinking back on", form.kind)
					}
					c.Shutdown(t.grace())
				}
			},
		},
		{
			ID:    "fork/branches",
			Name:  "session/fork (unstable) makes a new session with the source's history; each branch then has its own, on disk too",
			Items: []string{"extra#6", "acp-v1#17"},
			Needs: []string{"sessionCapabilities.fork", "loadSession"},
			Dshd:  true,
			Run: func(t *T) {
				c, src := t.Open(nil, nil)
				t.WantStop(t.Prompt(c, src, "the shared start"), "end_turn", "the source's first turn")
				var res json.RawMessage
				t.Do(c, "session/fork", map[string]any{"sessionId": src, "cwd": t.Cwd}, &res)
				fork := getString(res, "sessionId")
				if fork == "" || fork == src {
					t.Fatalf("session/fork returned %s", clip(res, 200))
				}
				t.WantStop(t.Prompt(c, fork, "only the fork"), "end_turn", "the fork's turn")
				t.WantStop(t.Prompt(c, src, "only the source"), "end_turn", "the source's second turn")

				c2 := t.Reconnect(c, nil, nil)
				if got, want := userPrompts(t.loadReplay(c2, fork)), []string{"the shared start", "only the fork"}; !slices.Equal(got, want) {
					t.Errorf("the fork replays prompts %q, want %q", got, want)
				}
				if got, want := userPrompts(t.loadReplay(c2, src)), []string{"the shared start", "only the source"}; !slices.Equal(got, want) {
					t.Errorf("the source replays prompts %q, want %q", got, want)
				}
				m := t.Call(c2, "session/fork", map[string]any{"sessionId": "s_no_such_session", "cwd": t.Cwd})
				t.WantError(m, -32002, "a fork of an unknown session")
			},
		},
		{
			ID:    "prompt/usage",
			Name:  "the prompt response carries the turn's token usage (unstable), valid against schema.unstable.json",
			Items: []string{"extra#7"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				turn := t.Prompt(c, sid, "count my tokens")
				u := get(turn.Resp.Msg.Result, "usage")
				if u == nil {
					t.Fatalf("no usage in the prompt response: %s", clip(turn.Resp.Raw, 200))
				}
				for _, k := range []string{"totalTokens", "inputTokens", "outputTokens"} {
					if !reUint().Match(get(u, k)) {
						t.Errorf("usage.%s is %s, not a non-negative integer", k, get(u, k))
					}
				}
				if s := t.Schema(); s != nil {
					var v any
					_ = json.Unmarshal(turn.Resp.Msg.Result, &v)
					if !s.unstable.validates("#/$defs/PromptResponse", v) {
						t.Errorf("the prompt response does not validate against %s: %s", s.unstable.name, clip(turn.Resp.Msg.Result, 300))
					}
				}
			},
		},
	}
}
