// This file holds the subagent cases (acp-subagents.md §15) with a client
// that opts in and one that does not, driven by dshd's scripted model
// calling subagent and subagent_fork.

package conformance

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

var optIn = Caps{Subagents: true}.JSON()

// child is what a case learned about one announced child.
type child struct {
	id, outer string
	announced int // seq of the announcement
	task      string
	states    []string // state snapshots in order ("running", "idle:end_turn")
	stateSeqs []int
	idle      json.RawMessage
}

// children collects the announced children and their states from seq on.
func children(c *Client, seq int) (order []string, byID map[string]*child) {
	byID = map[string]*child{}
	for _, l := range c.Updates(seq, "") {
		u := l.Msg.Update()
		switch l.Msg.UpdateKind() {
		case "subagent_update":
			id := getString(u, "sessionId")
			ch := byID[id]
			if ch == nil {
				ch = &child{id: id, outer: l.Msg.SessionID(), announced: l.Seq}
				byID[id] = ch
				order = append(order, id)
			}
			if st := get(u, "state"); st != nil && !isNull(st) {
				s := getString(st, "state")
				if s == "idle" {
					s += ":" + getString(st, "stopReason")
					ch.idle = st
				}
				ch.states = append(ch.states, s)
				ch.stateSeqs = append(ch.stateSeqs, l.Seq)
			}
		case "session_message":
			if r := getString(u, "recipientSessionId"); byID[r] != nil && byID[r].task == "" {
				byID[r].task = textOf(get(u, "content"))
			}
		}
	}
	return order, byID
}

// awaitChild waits until a child whose task starts with prefix reports
// state, and returns its id.
func awaitChild(t *T, c *Client, seq int, prefix, state string) string {
	var found string
	t.Expect(c, seq, "a child ("+prefix+") in state "+state, func(m *Msg) bool {
		if m.UpdateKind() != "subagent_update" || getString(m.Update(), "state", "state") != state {
			return false
		}
		_, byID := children(c, seq)
		ch := byID[getString(m.Update(), "sessionId")]
		if ch != nil && strings.HasPrefix(ch.task, prefix) {
			found = ch.id
			return true
		}
		return false
	})
	return found
}

// awaitCancelled waits until child id reports idle with stopReason
// cancelled (what names the wait in a failure).
func awaitCancelled(t *T, c *Client, seq int, id, what string) {
	t.Expect(c, seq, what, func(m *Msg) bool {
		return m.UpdateKind() == "subagent_update" && getString(m.Update(), "sessionId") == id && getString(m.Update(), "state", "stopReason") == "cancelled"
	})
}

// checkChildTurn checks one delegation seen by an opted-in client: the
// announcement on the parent, running then idle(want) on the parent, the
// task as session_message views, child traffic only under the child's id,
// and the idle before the parent's completing tool_call_update, which
// links the child next to a text item.
func checkChildTurn(t *T, c *Client, sid string, turn Turn, want string) []*child {
	order, byID := children(c, turn.Start)
	if len(order) == 0 {
		t.Fatalf("no subagent_update announced a child")
	}
	var out []*child
	for _, id := range order {
		ch := byID[id]
		out = append(out, ch)
		if ch.outer != sid {
			continue // a grandchild; checked where nesting is the point
		}
		if ch.announced > turn.Resp.Seq {
			t.Errorf("child %s was announced after the parent's prompt response", id)
		}
		if len(ch.states) < 2 || ch.states[0] != "running" || ch.states[len(ch.states)-1] != "idle:"+want {
			t.Errorf("child %s went through states %v, want running … idle:%s", id, ch.states, want)
		}
		if ch.task == "" {
			t.Errorf("child %s got no session_message carrying its task", id)
		}
		inbound := false
		for _, l := range c.Updates(ch.announced, id) {
			if l.Msg.UpdateKind() == "session_message" && getString(l.Msg.Update(), "recipientSessionId") == id {
				inbound = true
			}
		}
		if !inbound {
			t.Errorf("child %s has no incoming session_message on its own stream", id)
		}
		// The parent's tool call that completes with a link to this child.
		idleSeq := ch.stateSeqs[len(ch.stateSeqs)-1]
		linked := false
		for _, l := range c.Updates(turn.Start, sid) {
			u := l.Msg.Update()
			if l.Msg.UpdateKind() != "tool_call_update" || l.Seq > turn.Resp.Seq {
				continue
			}
			for _, it := range getArray(u, "content") {
				if getString(it, "type") == "session" && getString(it, "sessionId") == id && getString(u, "status") != "" && getString(u, "status") != "in_progress" {
					linked = true
					if l.Seq < idleSeq {
						t.Errorf("the parent's tool call completed before child %s reported idle", id)
					}
				}
			}
		}
		if !linked {
			t.Errorf("no completing tool_call_update on the parent links child %s", id)
		}
	}
	// Child answers stay on child streams.
	for _, l := range c.Updates(turn.Start, "") {
		if l.Msg.UpdateKind() == "agent_message_chunk" && strings.Contains(textOf(get(l.Msg.Update(), "content")), "child answer") && byID[l.Msg.SessionID()] == nil {
			t.Errorf("a child's answer appeared on session %s: %s", l.Msg.SessionID(), clip(l.Raw, 200))
		}
	}
	return out
}

func subagentCases() []*Case {
	return []*Case{
		{
			ID:    "subagents/fallback-without-opt-in",
			Name:  "without the opt-in, spawn and fork run as plain tool calls pending → in_progress → completed with the child's answer, and nothing carries a child id",
			Items: []string{"subagents#1", "subagents#2", "subagents#3"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), nil)
				turn := t.EndTurn(c, sid, "conf-both")
				order, byID := ToolCalls(c, sid, turn.Start)
				n := 0
				for _, id := range order {
					us := byID[id]
					if !strings.HasPrefix(getString(us[0], "title"), "Subagent") && !strings.Contains(string(get(us[0], "rawInput")), "child-quick") {
						continue
					}
					n++
					st := statuses(us)
					if len(st) < 3 || st[0] != "pending" || !slices.Contains(st, "in_progress") || st[len(st)-1] != "completed" {
						t.Errorf("delegating tool call %s went %v, want pending → in_progress → completed", id, st)
					}
					if !strings.Contains(toolText(us), "child answer") {
						t.Errorf("delegating tool call %s ends without the child's answer: %q", id, clip(toolText(us), 200))
					}
				}
				if n != 2 {
					t.Errorf("want 2 delegating tool calls (spawn and fork), got %d", n)
				}
			},
		},
		{
			ID:    "subagents/spawn-opted-in",
			Name:  "with the opt-in, a spawned child is announced on its parent first, runs then idles (end_turn) before the parent's tool call completes with a text and a session item",
			Items: []string{"subagents#4", "subagents#5", "subagents#9", "subagents#11", "subagents#12", "subagents#13", "subagents#14", "subagents#15"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.EndTurn(c, sid, "conf-spawn")
				if kids := checkChildTurn(t, c, sid, turn, "end_turn"); len(kids) != 1 {
					t.Errorf("want one child, got %d", len(kids))
				}
			},
		},
		{
			ID:    "subagents/fork-opted-in",
			Name:  "with the opt-in, a forked child follows the same announcement, state and message rules",
			Items: []string{"subagents#4", "subagents#5", "subagents#9", "subagents#11", "subagents#12", "subagents#13"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.EndTurn(c, sid, "conf-both")
				kids := checkChildTurn(t, c, sid, turn, "end_turn")
				if len(kids) != 2 {
					t.Errorf("want two children (spawn and fork), got %d", len(kids))
				}
				seen := map[string]bool{sid: true}
				for _, k := range kids {
					if seen[k.id] {
						t.Errorf("child id %s is used twice", k.id)
					}
					seen[k.id] = true
				}
			},
		},
		{
			ID:    "subagents/child-error",
			Name:  "a child whose model fails reports idle with stopReason error and an error object",
			Items: []string{"subagents#12"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.EndTurn(c, sid, "conf-spawn-fail")
				kids := checkChildTurn(t, c, sid, turn, "error")
				for _, k := range kids {
					if e := get(k.idle, "error"); getString(e, "message") == "" || get(e, "code") == nil {
						t.Errorf("child %s idles with error but no error object: %s", k.id, clip(k.idle, 200))
					}
				}
			},
		},
		{
			ID:    "subagents/child-cancel",
			Name:  "session/cancel for one child stops it (idle cancelled, no response) while its sibling ends end_turn and the parent goes on",
			Items: []string{"subagents#16", "subagents#12", "subagents#17", "acp-v1#7"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				id, seq := t.SendPrompt(c, sid, "conf-spawn-two")
				hang := awaitChild(t, c, seq, "child-hang", "running")
				t.Expect(c, seq, "the hanging child's first words", func(m *Msg) bool {
					return m.SessionID() == hang && m.UpdateKind() == "agent_message_chunk"
				})
				cancelAt := c.Seq()
				t.Cancel(c, hang)
				turn := t.Finish(c, id, seq)
				t.WantStop(turn, "end_turn", "the parent after one child was cancelled")
				_, byID := children(c, seq)
				for _, k := range byID {
					want := "idle:end_turn"
					if k.id == hang {
						want = "idle:cancelled"
					}
					if len(k.states) == 0 || k.states[len(k.states)-1] != want {
						t.Errorf("child %s (%s) ended in %v, want %s", k.id, k.task, k.states, want)
					}
				}
				end := t.Barrier(c)
				for _, l := range c.Messages(cancelAt, func(m *Msg) bool { return m.IsResponse() && m.IDKey() == "null" }) {
					if l.Seq < end {
						t.Errorf("the child cancel got an answer: %s", clip(l.Raw, 200))
					}
				}
			},
		},
		{
			ID:    "subagents/parent-cancel",
			Name:  "cancelling the parent reports every running child idle/cancelled before the parent's cancelled response",
			Items: []string{"subagents#18", "subagents#12"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				id, seq := t.SendPrompt(c, sid, "conf-spawn-hang")
				kid := awaitChild(t, c, seq, "child-hang", "running")
				turn := t.CancelTurn(c, sid, id, seq, "the cancelled parent")
				_, byID := children(c, seq)
				k := byID[kid]
				if len(k.states) == 0 || k.states[len(k.states)-1] != "idle:cancelled" || k.stateSeqs[len(k.stateSeqs)-1] > turn.Resp.Seq {
					t.Errorf("the child ended in %v, want idle:cancelled before the parent's response", k.states)
				}
			},
		},
		{
			ID:    "subagents/child-permission",
			Name:  "a child's permission request names the child's session and a tool call announced on it; allowing runs the tool",
			Items: []string{"subagents#10", "subagents#4"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(PermissionAnswer("allow_once")), optIn)
				turn := t.EndTurn(c, sid, "conf-spawn-write")
				_, byID := children(c, turn.Start)
				reqs := requests(c, "session/request_permission")
				if len(reqs) == 0 {
					t.Fatalf("no permission request for the child's write in ask mode")
				}
				for _, r := range reqs {
					if byID[r.Msg.SessionID()] == nil {
						t.Errorf("the child's permission request names session %s, not the child", r.Msg.SessionID())
					}
				}
				if got, _ := cwdFile(t, "child.txt"); got != "from the child\n" {
					t.Errorf("the allowed child write did not happen: %q", got)
				}
			},
		},
		{
			ID:    "subagents/child-permission-without-opt-in",
			Name:  "without the opt-in, a child's permission request is asked on the parent with a tool call mirrored there first",
			Items: []string{"subagents#2", "acp-v1#55", "acp-v1#52"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(PermissionAnswer("allow_once")), nil)
				turn := t.EndTurn(c, sid, "conf-spawn-write")
				reqs := requests(c, "session/request_permission")
				if len(reqs) == 0 {
					t.Fatalf("no permission request for the child's write in ask mode")
				}
				order, _ := ToolCalls(c, sid, turn.Start)
				for _, r := range reqs {
					tc := getString(r.Msg.Params, "toolCall", "toolCallId")
					if r.Msg.SessionID() != sid || !slices.Contains(order, tc) {
						t.Errorf("permission request for %s/%s: want the parent session and a tool call announced there", r.Msg.SessionID(), tc)
					}
				}
				if _, ok := cwdFile(t, "child.txt"); !ok {
					t.Errorf("the allowed child write did not happen")
				}
			},
		},
		{
			ID:    "subagents/child-permission-cancelled",
			Name:  "a child's pending permission answered cancelled after the parent is cancelled never runs the tool",
			Items: []string{"subagents#19", "subagents#18", "acp-v1#43"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(nil), optIn)
				t.cancelWhileAsked(c, sid, "conf-spawn-write", "the cancelled parent")
				if _, ok := cwdFile(t, "child.txt"); ok {
					t.Errorf("the child's tool ran although its permission was cancelled")
				}
			},
		},
		{
			ID:    "subagents/late-allow-after-child-cancel",
			Name:  "an allow that arrives after the child was cancelled does not restart its work",
			Items: []string{"subagents#19", "subagents#16"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(nil), optIn)
				id, seq := t.SendPrompt(c, sid, "conf-spawn-write")
				req := t.ExpectRequest(c, seq, "session/request_permission")
				kid := req.Msg.SessionID()
				t.Cancel(c, kid)
				awaitCancelled(t, c, seq, kid, "the child's idle/cancelled")
				t.Reply(c, req.Msg.ID, permissionOutcome(req.Msg, "allow_once"))
				t.WantStop(t.Finish(c, id, seq), "end_turn", "the parent")
				if _, ok := cwdFile(t, "child.txt"); ok {
					t.Errorf("a late allow restarted the cancelled child's work")
				}
			},
		},
	}
}

func subagentCases2() []*Case {
	return []*Case{
		{
			ID:    "subagents/forbidden-methods",
			Name:  "prompt, load, resume, close, delete, set_mode, set_config_option and fork on a child id fail (-32602 with data.sessionId) and change nothing",
			Items: []string{"subagents#20"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.Prompt(c, sid, "conf-spawn")
				order, _ := children(c, turn.Start)
				if len(order) == 0 {
					t.Fatalf("no child was announced")
				}
				kid := order[0]
				calls := []struct {
					method string
					params map[string]any
				}{
					{"session/prompt", map[string]any{"sessionId": kid, "prompt": []any{Text("hi")}}},
					{"session/load", map[string]any{"sessionId": kid, "cwd": t.Cwd, "mcpServers": []any{}}},
					{"session/resume", map[string]any{"sessionId": kid, "cwd": t.Cwd}},
					{"session/close", map[string]any{"sessionId": kid}},
					{"session/delete", map[string]any{"sessionId": kid}},
					{"session/set_mode", map[string]any{"sessionId": kid, "modeId": "yolo"}},
					{"session/set_config_option", map[string]any{"sessionId": kid, "configId": "mode", "value": "yolo"}},
				}
				for _, call := range calls {
					m := t.Call(c, call.method, call.params)
					if t.WantError(m, -32602, call.method+" on a child id") && getString(m.Error.Data, "sessionId") != kid {
						t.Errorf("%s on a child id: data.sessionId is %s, want %q", call.method, clip(m.Error.Data, 120), kid)
					}
				}
				if m := t.Call(c, "session/fork", map[string]any{"sessionId": kid, "cwd": t.Cwd, "mcpServers": []any{}}); m.Error == nil {
					t.Errorf("session/fork on a child id succeeded")
				}
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the parent afterwards")
			},
		},
		{
			ID:    "subagents/list-excludes-children",
			Name:  "session/list never lists a child session",
			Items: []string{"subagents#21"},
			Needs: []string{"sessionCapabilities.list"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.Prompt(c, sid, "conf-both")
				order, _ := children(c, turn.Start)
				var res json.RawMessage
				t.Do(c, "session/list", map[string]any{}, &res)
				for _, info := range getArray(res, "sessions") {
					if slices.Contains(order, getString(info, "sessionId")) {
						t.Errorf("session/list lists the child %s", getString(info, "sessionId"))
					}
				}
				if _, ok := listAll(t, c, t.Cwd)[sid]; !ok {
					t.Errorf("the parent %s is not listed", sid)
				}
			},
		},
		{
			ID:    "subagents/parent-close",
			Name:  "session/close of a parent with a running child: prompt cancelled, close {}, no child traffic afterwards",
			Items: []string{"subagents#22", "acp-v1#32"},
			Needs: []string{"sessionCapabilities.close"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				id, seq := t.SendPrompt(c, sid, "conf-spawn-hang")
				kid := awaitChild(t, c, seq, "child-hang", "running")
				var res json.RawMessage
				t.Do(c, "session/close", map[string]any{"sessionId": sid}, &res)
				closedAt := c.Seq()
				t.WantStop(t.Finish(c, id, seq), "cancelled", "the closed parent's prompt")
				end := t.Barrier(c)
				for _, l := range c.Messages(closedAt, nil) {
					if l.Seq < end && (l.Msg.SessionID() == kid || strings.Contains(string(l.Raw), kid)) {
						t.Errorf("child traffic after the parent was closed: %s", clip(l.Raw, 200))
					}
				}
			},
		},
		{
			ID:    "subagents/load-replay",
			Name:  "load replays child announcements before child traffic and before the response to an opted-in client, and only parent traffic to one that did not opt in",
			Items: []string{"subagents#23", "subagents#24", "subagents#4"},
			Needs: []string{"loadSession"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				t.EndTurn(c, sid, "conf-spawn")

				c2 := t.Reconnect(c, scripted("yolo", nil), optIn)
				seq, resp := t.load(c2, sid)
				order, byID := children(c2, seq)
				if len(order) == 0 {
					t.Errorf("the replay announces no child")
				}
				end := t.Barrier(c2)
				for _, kid := range order {
					if byID[kid].announced > resp.Seq {
						t.Errorf("child %s was announced after the load response", kid)
					}
					for _, l := range c2.Updates(resp.Seq, kid) {
						if l.Seq < end {
							t.Errorf("finished child %s has traffic after the load response: %s", kid, clip(l.Raw, 160))
						}
					}
				}

				c3 := t.Reconnect(c2, scripted("yolo", nil), nil)
				seq3 := c3.Seq()
				t.Do(c3, "session/load", map[string]any{"sessionId": sid, "cwd": t.Cwd, "mcpServers": []any{}}, nil)
				for _, l := range c3.Updates(seq3, "") {
					if l.Msg.SessionID() != sid {
						t.Errorf("a client that did not opt in got traffic for %s on load", l.Msg.SessionID())
					}
				}
				if !strings.Contains(AgentText(c3, sid, seq3, -1), "The parent is done") {
					t.Errorf("the parent's own history is missing from the replay")
				}
			},
		},
		{
			ID:    "subagents/fanout-100",
			Name:  "100 parallel spawned children in one turn: 100 distinct announcements, each running then idle end_turn, every tool call completed",
			Items: []string{"subagents#4", "subagents#7", "subagents#11"},
			Dshd:  true,
			Heavy: true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.EndTurn(c, sid, "conf-fanout")
				order, byID := children(c, turn.Start)
				if len(order) != 100 {
					t.Errorf("want 100 children, got %d", len(order))
				}
				for _, id := range order {
					k := byID[id]
					if k.outer != sid || len(k.states) < 2 || k.states[0] != "running" || k.states[len(k.states)-1] != "idle:end_turn" {
						t.Errorf("child %s under %s went %v", id, k.outer, k.states)
					}
				}
				tcs, updates := ToolCalls(c, sid, turn.Start)
				done := 0
				for _, id := range tcs {
					if st := statuses(updates[id]); len(st) > 0 && st[len(st)-1] == "completed" {
						done++
					}
				}
				if done != 100 {
					t.Errorf("%d of the parent's tool calls completed, want 100", done)
				}
			},
		},
		{
			ID:    "subagents/depth-limit",
			Name:  "children recursing past --max-depth get an error tool result; each level is announced on its immediate parent",
			Items: []string{"subagents#5", "subagents#6"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json", Args: []string{"--mode", "yolo", "--max-depth", "2"}}, optIn)
				turn := t.EndTurn(c, sid, "conf-recurse")
				order, byID := children(c, turn.Start)
				if len(order) != 2 {
					t.Fatalf("want 2 nested children under --max-depth 2, got %d", len(order))
				}
				if byID[order[0]].outer != sid || byID[order[1]].outer != order[0] {
					t.Errorf("nesting: %s under %s, %s under %s; want the grandchild on its parent", order[0], byID[order[0]].outer, order[1], byID[order[1]].outer)
				}
				deepest := order[1]
				_, tools := ToolCalls(c, deepest, turn.Start)
				refused := false
				for _, us := range tools {
					if st := statuses(us); len(st) > 0 && st[len(st)-1] == "failed" {
						refused = true
					}
				}
				if !refused {
					t.Errorf("the deepest child's delegation did not fail")
				}
			},
		},
		{
			ID:    "subagents/no-cancel-capability",
			Name:  "session/cancel for a child that does not grant cancel gets no response and the child carries on",
			Items: []string{"subagents#17"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", nil), optIn)
				turn := t.Prompt(c, sid, "conf-spawn")
				for _, l := range c.Updates(turn.Start, sid) {
					if l.Msg.UpdateKind() == "subagent_update" && has(l.Msg.Update(), "capabilities") && !isObject(get(l.Msg.Update(), "capabilities", "cancel")) {
						t.Fatalf("case not written for children without cancel yet: %s", clip(l.Raw, 200))
					}
				}
				t.Skipf("every child dshd announces grants cancel")
			},
		},
		{
			ID:    "subagents/relay-acp-grandchild",
			Name:  "an acp child's own child is re-announced under the acp child's upstream id with a fresh id",
			Items: []string{"subagents#25"},
			Dshd:  true,
			Run: func(t *T) {
				cfg := filepath.Join(t.Dir, "config", "dshd", "config.json")
				inner := map[string]any{"agents": map[string]any{"inner": map[string]any{
					"command": t.r.target.Command,
					"args":    append(slices.Clone(t.r.target.Args), "--model", "scripted:"+filepath.Join(t.r.scriptDir, "conformance.json"), "--mode", "yolo", "--state-dir", filepath.Join(t.Dir, "inner-state")),
				}}}
				writeFile(t, cfg, string(mustJSON(inner)))
				c := t.Connect(&ClientOptions{Script: "conformance.json", Args: []string{"--mode", "yolo", "--subagent", "subagent=acp,agent=inner"}, Env: []string{"XDG_CONFIG_HOME=" + filepath.Join(t.Dir, "config")}}, optIn)
				sid := t.NewSession(c, t.Cwd)
				turn := t.EndTurn(c, sid, "conf-relay")
				order, byID := children(c, turn.Start)
				if len(order) < 2 {
					t.Fatalf("want the acp child and its relayed child announced, got %d children", len(order))
				}
				up, grand := order[0], order[1]
				if byID[up].outer != sid || byID[grand].outer != up {
					t.Errorf("relay nesting: %s under %s, %s under %s", up, byID[up].outer, grand, byID[grand].outer)
				}
				if grand == up || grand == sid {
					t.Errorf("the relayed child reuses an id")
				}

				// A cancel for the relayed grandchild reaches the child agent,
				// whose own child then reports idle/cancelled.
				id, seq := t.SendPrompt(c, sid, "conf-relay-hang")
				g := awaitChild(t, c, seq, "child-hang", "running")
				_, byID = children(c, seq)
				if up := byID[g].outer; byID[up] == nil || byID[up].outer != sid {
					t.Errorf("the relayed hanging child %s is not announced under the acp child", g)
				}
				t.Cancel(c, g)
				awaitCancelled(t, c, seq, g, "idle/cancelled for the relayed child")
				t.WantStop(t.Finish(c, id, seq), "end_turn", "the parent after its relayed grandchild was cancelled")
			},
		},
	}
}
