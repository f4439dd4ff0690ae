// This file holds the session lifecycle cases: new, list, pagination,
// delete, load, resume, close, additional directories and the session
// cwd.

package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func sessionCases() []*Case {
	return []*Case{
		{
			ID:    "session/new-distinct",
			Name:  "session/new returns non-empty string ids, different for two sessions",
			Items: []string{"acp-v1#25"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				a, b := t.NewSession(c, t.Cwd), t.NewSession(c, t.Cwd)
				if a == b {
					t.Errorf("two session/new calls returned the same id %q", a)
				}
			},
		},
		{
			ID:    "session/list-filter",
			Name:  "session/list returns a sessions array with absolute cwds, filtered by cwd, empty when nothing matches",
			Items: []string{"acp-v1#33"},
			Needs: []string{"sessionCapabilities.list"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				other := mkdir(t, "other")
				mine := []string{t.NewSession(c, t.Cwd), t.NewSession(c, t.Cwd)}
				theirs := t.NewSession(c, other)
				for _, sid := range append(slices.Clone(mine), theirs) {
					t.Prompt(c, sid, "hello")
				}
				got := listAll(t, c, t.Cwd)
				for _, sid := range mine {
					if _, ok := got[sid]; !ok {
						t.Errorf("session %s is missing from session/list(cwd)", sid)
					}
				}
				if _, ok := got[theirs]; ok {
					t.Errorf("session/list(cwd) lists %s, which has another cwd", theirs)
				}
				for sid, info := range got {
					if cwd := getString(info, "cwd"); cwd != t.Cwd {
						t.Errorf("session/list(cwd=%s) lists %s with cwd %q", t.Cwd, sid, cwd)
					}
				}
				var res json.RawMessage
				t.Do(c, "session/list", map[string]any{"cwd": mkdir(t, "empty")}, &res)
				if string(get(res, "sessions")) != "[]" {
					t.Errorf("session/list for a cwd without sessions answered %s, want sessions: []", clip(res, 200))
				}
				t.Do(c, "session/list", map[string]any{}, &res)
				for _, info := range getArray(res, "sessions") {
					if getString(info, "sessionId") == "" || !filepath.IsAbs(getString(info, "cwd")) {
						t.Errorf("session/list entry %s lacks a sessionId or an absolute cwd", clip(info, 200))
					}
				}
			},
		},
		{
			ID:    "session/list-pagination",
			Name:  "paging with nextCursor visits every session exactly once; an invalid cursor is an error",
			Items: []string{"acp-v1#34"},
			Needs: []string{"sessionCapabilities.list"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				const n = 55
				want := map[string]bool{}
				for range n {
					want[t.NewSession(c, t.Cwd)] = true
				}
				seen := map[string]int{}
				cursor, pages := "", 0
				for {
					params := map[string]any{"cwd": t.Cwd}
					if cursor != "" {
						params["cursor"] = cursor
					}
					var res json.RawMessage
					t.Do(c, "session/list", params, &res)
					pages++
					for _, info := range getArray(res, "sessions") {
						seen[getString(info, "sessionId")]++
					}
					next := get(res, "nextCursor")
					if next == nil || isNull(next) {
						break
					}
					cursor = getString(res, "nextCursor")
					if cursor == "" || pages > n+1 {
						t.Fatalf("nextCursor %s never ends", clip(next, 60))
					}
				}
				listed := 0
				for sid := range want {
					if seen[sid] > 0 {
						listed++
					}
				}
				for sid, n := range seen {
					if n > 1 {
						t.Errorf("paging saw session %s %d times, want once", sid, n)
					}
				}
				if listed == 0 {
					// Listing only sessions with history is the agent's
					// choice; paging over 55 of them would take 55 turns.
					t.Skipf("the agent lists none of %d sessions that were never prompted, so paging over them cannot be checked", n)
				}
				for sid := range want {
					if seen[sid] != 1 {
						t.Errorf("paging saw session %s %d times, want once", sid, seen[sid])
					}
				}
				t.Logf("%d sessions in %d pages", n, pages)
				m := t.Call(c, "session/list", map[string]any{"cursor": "this-is-not-a-cursor-%%%"})
				if m.Error == nil {
					t.Errorf("an invalid cursor was accepted: %s", clip(m.Result, 200))
				} else if t.IsDshd() {
					t.WantError(m, -32602, "an invalid cursor")
				}
			},
		},
		{
			ID:    "session/delete",
			Name:  "a deleted session disappears from session/list; deleting an unknown id returns {}",
			Items: []string{"acp-v1#35"},
			Needs: []string{"sessionCapabilities.delete", "sessionCapabilities.list"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				t.Prompt(c, sid, "hello")
				keep := t.NewSession(c, t.Cwd)
				t.Prompt(c, keep, "hello")
				t.WantEmpty(c, "session/delete", map[string]any{"sessionId": sid}, "session/delete")
				got := listAll(t, c, t.Cwd)
				if _, ok := got[sid]; ok {
					t.Errorf("the deleted session %s is still listed", sid)
				}
				if _, ok := got[keep]; !ok {
					t.Errorf("deleting %s also removed %s from the list", sid, keep)
				}
				t.Do(c, "session/delete", map[string]any{"sessionId": "s_never_existed"}, nil)
				t.Do(c, "session/delete", map[string]any{"sessionId": sid}, nil)
			},
		},
		{
			ID:    "session/load-replay",
			Name:  "session/load replays every exchange (user and agent chunks, the loaded id) before its response; prompting continues",
			Items: []string{"acp-v1#29", "acp-v1#30", "acp-v1#17"},
			Needs: []string{"loadSession"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				t.Prompt(c, sid, "first message")
				t.Prompt(c, sid, "second message")

				c2 := t.Reconnect(c, nil, nil)
				seq, resp := t.load(c2, sid)
				replay := c2.Updates(seq, "")
				var users, agents []string
				for _, l := range replay {
					if l.Seq > resp.Seq {
						break
					}
					if l.Msg.SessionID() != sid {
						t.Errorf("a replayed update carries session %q, not the loaded %q", l.Msg.SessionID(), sid)
					}
					switch l.Msg.UpdateKind() {
					case "user_message_chunk":
						users = append(users, textOf(get(l.Msg.Update(), "content")))
					case "agent_message_chunk":
						agents = append(agents, textOf(get(l.Msg.Update(), "content")))
					}
				}
				user := strings.Join(users, "")
				if !strings.Contains(user, "first message") || !strings.Contains(user, "second message") || strings.Index(user, "first message") > strings.Index(user, "second message") {
					t.Errorf("the replay before the response must carry both user messages in order; user chunks read %q", user)
				}
				if len(agents) == 0 {
					t.Errorf("the replay before the response carries no agent_message_chunk")
				}
				after := t.Barrier(c2)
				for _, l := range c2.Updates(resp.Seq, sid) {
					if l.Seq < after && (l.Msg.UpdateKind() == "user_message_chunk") {
						t.Errorf("history arrived after the session/load response: %s", clip(l.Raw, 200))
					}
				}
				turn := t.Prompt(c2, sid, "third message")
				if turn.Resp.Msg.Error != nil {
					t.Fatalf("a prompt after session/load failed: %v", turn.Resp.Msg.Error)
				}
				if t.IsDshd() && !strings.Contains(AgentText(c2, sid, turn.Start, turn.Resp.Seq), "third message") {
					t.Errorf("the conversation did not continue after load")
				}
			},
		},
		{
			ID:    "session/resume",
			Name:  "session/resume without mcpServers replays nothing before its response and the session takes prompts",
			Items: []string{"acp-v1#31", "acp-v1#17"},
			Needs: []string{"sessionCapabilities.resume"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				t.Prompt(c, sid, "first message")
				c2 := t.Reconnect(c, nil, nil)
				seq := c2.Seq()
				m := t.Call(c2, "session/resume", map[string]any{"sessionId": sid, "cwd": t.Cwd})
				if m.Error != nil {
					t.Fatalf("session/resume without mcpServers: %v", m.Error)
				}
				for _, l := range c2.Updates(seq, sid) {
					if k := l.Msg.UpdateKind(); k == "user_message_chunk" || k == "agent_message_chunk" || k == "tool_call" {
						t.Errorf("session/resume replayed history: %s", clip(l.Raw, 200))
					}
				}
				if turn := t.Prompt(c2, sid, "after resume"); turn.Resp.Msg.Error != nil {
					t.Errorf("a prompt after session/resume failed: %v", turn.Resp.Msg.Error)
				}
			},
		},
		{
			ID:    "session/close-mid-turn",
			Name:  "session/close during a turn answers the prompt cancelled first, then {}; nothing of the turn follows",
			Items: []string{"acp-v1#32", "acp-v1#42"},
			Needs: []string{"sessionCapabilities.close"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				pid, seq := t.SendStreaming(c, sid, "conf-stream-hang")
				closeResp := t.Response(c, t.Send(c, "session/close", map[string]any{"sessionId": sid}))
				if closeResp.Msg.Error != nil || !isObject(closeResp.Msg.Result) {
					t.Errorf("session/close answered %s, want {}", clip(closeResp.Raw, 200))
				}
				turn := t.Finish(c, pid, seq)
				t.WantStop(turn, "cancelled", "the prompt of a closed session")
				if turn.Resp.Seq > closeResp.Seq {
					t.Errorf("session/close was answered before the prompt's cancelled response")
				}
				t.WantQuiet(c, sid, turn.Resp.Seq, "an update after the closed turn's response")
				if t.IsDshd() {
					t.WantError(t.Call(c, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{Text("hi")}}), -32002, "a prompt for a closed session")
				}
			},
		},
		{
			ID:    "session/additional-directories",
			Name:  "relative, empty, null or non-array additionalDirectories fail new, load and resume with -32602; load without them activates no extra roots",
			Items: []string{"acp-v1#36"},
			Needs: []string{"sessionCapabilities.additionalDirectories"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				extra := mkdir(t, "extra")
				bad := []any{[]any{"relative/dir"}, []any{""}, []any{nil}, "not-an-array", []any{42}}
				for _, dirs := range bad {
					m := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}, "additionalDirectories": dirs})
					t.WantError(m, -32602, fmt.Sprintf("session/new with additionalDirectories %s", mustJSON(dirs)))
				}
				var res json.RawMessage
				t.Do(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}, "additionalDirectories": []string{extra}}, &res)
				sid := getString(res, "sessionId")
				t.Prompt(c, sid, "hello")

				c2 := t.Reconnect(c, nil, nil)
				if t.Agent().Has("loadSession") {
					for _, dirs := range bad[:3] {
						m := t.Call(c2, "session/load", map[string]any{"sessionId": sid, "cwd": t.Cwd, "mcpServers": []any{}, "additionalDirectories": dirs})
						t.WantError(m, -32602, fmt.Sprintf("session/load with additionalDirectories %s", mustJSON(dirs)))
					}
				}
				if t.Agent().Has("sessionCapabilities.resume") {
					for _, dirs := range bad[:3] {
						m := t.Call(c2, "session/resume", map[string]any{"sessionId": sid, "cwd": t.Cwd, "additionalDirectories": dirs})
						t.WantError(m, -32602, fmt.Sprintf("session/resume with additionalDirectories %s", mustJSON(dirs)))
					}
				}
				if t.Agent().Has("loadSession") && t.Agent().Has("sessionCapabilities.list") {
					t.Do(c2, "session/load", map[string]any{"sessionId": sid, "cwd": t.Cwd, "mcpServers": []any{}}, nil)
					info := listAll(t, c2, t.Cwd)[sid]
					if dirs := getArray(info, "additionalDirectories"); len(dirs) > 0 {
						t.Errorf("after a load without additionalDirectories the session still lists %s", clip(get(info, "additionalDirectories"), 200))
					}
				}
			},
		},
		{
			ID:    "session/additional-directories-null",
			Name:  "additionalDirectories: null is rejected with -32602 (acp-v1 §8.7: null is invalid for the field)",
			Items: []string{"acp-v1#36"},
			Needs: []string{"sessionCapabilities.additionalDirectories"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				m := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}, "additionalDirectories": nil})
				t.WantError(m, -32602, "session/new with additionalDirectories null")
			},
		},
		{
			ID:    "session/cwd",
			Name:  "tools work in the session cwd, not in the agent's process directory, with local tools and with client terminals",
			Items: []string{"acp-v1#27", "acp-v1#70"},
			Dshd:  true,
			Run: func(t *T) {
				proc := mkdir(t, "proc")
				c, sid := t.Open(&ClientOptions{Script: "conformance.json", Args: []string{"--mode", "yolo"}, Dir: proc}, nil)
				t.EndTurn(c, sid, "conf-write")
				t.EndTurn(c, sid, "conf-run")
				for _, f := range []string{"notes.txt", "ran.txt"} {
					if _, err := os.Stat(filepath.Join(t.Cwd, f)); err != nil {
						t.Errorf("%s was not made in the session cwd: %v", f, err)
					}
					if _, err := os.Stat(filepath.Join(proc, f)); err == nil {
						t.Errorf("%s was made in the agent's process directory", f)
					}
				}
				terms := &Terminals{}
				t.Cleanup(terms.Close)
				c2, sid2 := t.Open(&ClientOptions{Script: "conformance.json", Args: []string{"--mode", "yolo"}, Dir: proc, Handlers: terms.Handlers()}, Caps{Terminal: true}.JSON())
				t.WantStop(t.Prompt(c2, sid2, "conf-run"), "end_turn", "conf-run with a client terminal")
				if len(terms.Created) == 0 {
					t.Fatalf("no terminal/create for run_command although the client offers terminals")
				}
				for _, p := range terms.Created {
					if cwd := getString(p, "cwd"); cwd != t.Cwd {
						t.Errorf("terminal/create cwd is %q, want the session cwd %q", cwd, t.Cwd)
					}
				}
			},
		},
	}
}

// mkdir makes a directory under the case's directory.
func mkdir(t *T, name string) string {
	p := filepath.Join(t.Dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

// listAll pages through session/list for cwd and returns the entries by
// id.
func listAll(t *T, c *Client, cwd string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	cursor := ""
	for range 1000 {
		params := map[string]any{"cwd": cwd}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res json.RawMessage
		t.Do(c, "session/list", params, &res)
		if v := get(res, "sessions"); v == nil || !strings.HasPrefix(string(v), "[") {
			t.Fatalf("session/list answered %s without a sessions array", clip(res, 200))
		}
		for _, info := range getArray(res, "sessions") {
			out[getString(info, "sessionId")] = info
		}
		cursor = getString(res, "nextCursor")
		if cursor == "" {
			return out
		}
	}
	t.Fatalf("session/list pagination does not end")
	return nil
}
