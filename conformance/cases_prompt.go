// This file holds the prompt-turn cases: stop reasons, ordering,
// cancellation, concurrency, content checks, message ids, failures and a
// client that goes away mid-turn.

package conformance

import (
	"encoding/json"
	"slices"
	"strings"
)

// listDiff returns what of old is not in cur, and what of cur is new.
func listDiff(old, cur []string) (lost, added []string) {
	for _, x := range old {
		if !slices.Contains(cur, x) {
			lost = append(lost, x)
		}
	}
	for _, x := range cur {
		if !slices.Contains(old, x) {
			added = append(added, x)
		}
	}
	return lost, added
}

func promptCases() []*Case {
	return []*Case{
		{
			ID:    "prompt/basic",
			Name:  "a text prompt streams updates and ends with a StopReason, all updates first",
			Items: []string{"acp-v1#38", "acp-v1#39", "acp-v1#40", "acp-v1#49", "acp-v1#50", "acp-v1#37", "acp-v1#59"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				for _, p := range []string{"hello", "and hello again"} {
					turn := t.Prompt(c, sid, p)
					if turn.Resp.Msg.Error != nil {
						t.Fatalf("the prompt failed: %v", turn.Resp.Msg.Error)
					}
					checkMessageIDs(t, c, sid, turn.Start, turn.Resp.Seq)
				}
				t.Barrier(c)
			},
		},
		{
			ID:    "prompt/cancel",
			Name:  "session/cancel right after a prompt: the prompt answers a result (cancelled if it was running), nothing of the turn follows, the next prompt works",
			Items: []string{"acp-v1#41", "acp-v1#42", "acp-v1#45", "acp-v1#7"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				id, seq := t.SendPrompt(c, sid, "please take your time")
				t.Cancel(c, sid)
				turn := t.Finish(c, id, seq)
				if turn.Resp.Msg.Error != nil {
					t.Errorf("a cancelled prompt was answered with an error: %v", turn.Resp.Msg.Error)
				}
				t.Barrier(c)
				if next := t.Prompt(c, sid, "hello after cancel"); next.Resp.Msg.Error != nil {
					t.Errorf("the prompt after a cancel failed: %v", next.Resp.Msg.Error)
				}
			},
		},
		{
			ID:    "prompt/cancel-mid-stream",
			Name:  "session/cancel while chunks stream ends the turn cancelled, with no update after the response; the next prompt completes",
			Items: []string{"acp-v1#41", "acp-v1#42", "acp-v1#45", "acp-v1#11"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				id, seq := t.SendStreaming(c, sid, "conf-stream-hang")
				turn := t.CancelTurn(c, sid, id, seq, "a prompt cancelled mid-stream")
				t.WantQuiet(c, sid, turn.Resp.Seq, "an update after the cancelled response")
				t.WantStop(t.Prompt(c, sid, "hello again"), "end_turn", "the prompt after the cancel")
			},
		},
		{
			ID:    "prompt/concurrent",
			Name:  "a second prompt while a turn runs gets -32602 and leaves the running turn alone",
			Items: []string{"acp-v1#46"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				id, seq := t.SendStreaming(c, sid, "conf-hang")
				m := t.Call(c, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{Text("me too")}})
				t.WantError(m, -32602, "a concurrent prompt")
				t.CancelTurn(c, sid, id, seq, "the first prompt")
			},
		},
		{
			ID:    "prompt/unsupported-content",
			Name:  "image, audio and resource blocks the agent did not advertise are refused with -32602",
			Items: []string{"acp-v1#47"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				blocks := map[string]any{
					"image":           map[string]any{"type": "image", "mimeType": "image/png", "data": tinyPNG},
					"audio":           map[string]any{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
					"embeddedContext": map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x.txt", "text": "x"}},
				}
				tested := 0
				for _, capName := range []string{"image", "audio", "embeddedContext"} {
					if t.Agent().Has("promptCapabilities." + capName) {
						continue
					}
					tested++
					id, seq := t.SendPromptBlocks(c, sid, Text("look"), blocks[capName])
					turn := t.Finish(c, id, seq)
					t.WantError(turn.Resp.Msg, -32602, "a prompt with an unadvertised "+capName+" block")
				}
				if tested == 0 {
					t.Skipf("the agent advertises every prompt capability")
				}
				t.Prompt(c, sid, "plain text still works")
			},
		},
		{
			ID:    "prompt/slash-command",
			Name:  "a prompt naming an advertised slash command is accepted",
			Items: []string{"acp-v1#48", "acp-v1#58"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				t.Barrier(c)
				var name string
				for _, l := range c.Updates(0, sid) {
					if l.Msg.UpdateKind() == "available_commands_update" {
						if cmds := getArray(l.Msg.Update(), "availableCommands"); len(cmds) > 0 {
							name = getString(cmds[0], "name")
						}
					}
				}
				if name == "" {
					t.Skipf("the agent advertises no slash commands")
				}
				if turn := t.Prompt(c, sid, "/"+name+" test"); turn.Resp.Msg.Error != nil {
					t.Errorf("the slash command /%s failed: %v", name, turn.Resp.Msg.Error)
				}
			},
		},
		{
			ID:    "prompt/thoughts-and-message-ids",
			Name:  "reasoning and answer stream as thought and message chunks with distinct message ids",
			Items: []string{"acp-v1#50", "acp-v1#49"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				turn := t.EndTurn(c, sid, "conf-think")
				if chunkText(c, sid, "agent_thought_chunk", turn.Start, turn.Resp.Seq) == "" {
					t.Errorf("no agent_thought_chunk for the model's reasoning")
				}
				checkMessageIDs(t, c, sid, turn.Start, turn.Resp.Seq)
			},
		},
		{
			ID:    "prompt/max-turn-requests",
			Name:  "a model that keeps calling tools ends the turn with max_turn_requests",
			Items: []string{"acp-v1#38", "acp-v1#52"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json", Args: []string{"--max-turn-requests", "3"}}, nil)
				t.WantStop(t.Prompt(c, sid, "conf-loop"), "max_turn_requests", "an endless tool loop")
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the next prompt")
			},
		},
		{
			ID:    "prompt/model-failure",
			Name:  "a failing model backend is an error response, not a stop reason; the session stays usable",
			Items: []string{"acp-v1#38", "acp-v1#6"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				turn := t.Prompt(c, sid, "conf-fail")
				if turn.Resp.Msg.Error == nil {
					t.Errorf("a failed turn answered %s, want an error response", clip(turn.Resp.Raw, 200))
				}
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the next prompt")
			},
		},
		{
			ID:    "prompt/disconnect-mid-turn",
			Name:  "a client that goes away mid-turn: the agent exits 0 and a new process loads the session consistently",
			Items: []string{"acp-v1#29", "acp-v1#30"},
			Needs: []string{"loadSession"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				t.WantStop(t.Prompt(c, sid, "before the crash"), "end_turn", "the first prompt")
				t.SendStreaming(c, sid, "conf-stream-hang")
				if err := c.CloseStdin(); err != nil {
					t.Fatalf("%v", err)
				}
				select {
				case <-c.Done():
				case <-t.ctx.Done():
					t.Fatalf("the agent did not exit after its client went away")
				}
				if code := c.ExitCode(); code != 0 {
					t.Errorf("the agent exited with %d after stdin closed, want 0", code)
				}
				c2 := t.Connect(&ClientOptions{Script: "conformance.json"}, nil)
				seq2, _ := t.load(c2, sid)
				if user := chunkText(c2, sid, "user_message_chunk", seq2, -1); !strings.Contains(user, "before the crash") {
					t.Errorf("the reloaded session lost the completed exchange; user chunks read %q", user)
				}
				if !strings.Contains(AgentText(c2, sid, seq2, -1), "You said: before the crash") {
					t.Errorf("the reloaded session lost the completed answer")
				}
				t.WantStop(t.Prompt(c2, sid, "after the crash"), "end_turn", "a prompt after reloading")
			},
		},
	}
}

// checkMessageIDs checks acp-v1#50 on the chunks of one turn: a message id
// names one message, so it never comes back once another message of the
// same kind started, and thoughts and answers never share one.
func checkMessageIDs(t *T, c *Client, sid string, from, to int) {
	last := map[string]string{}
	done := map[string]bool{}
	kindOf := map[string]string{}
	for _, l := range c.Updates(from, sid) {
		if l.Seq >= to {
			break
		}
		k := l.Msg.UpdateKind()
		if k != "agent_message_chunk" && k != "agent_thought_chunk" && k != "user_message_chunk" {
			continue
		}
		id := getString(l.Msg.Update(), "messageId")
		if id == "" {
			continue
		}
		if prev, ok := kindOf[id]; ok && prev != k {
			t.Errorf("message id %q names a %s and a %s", id, prev, k)
		}
		kindOf[id] = k
		if last[k] != id {
			if done[id] {
				t.Errorf("message id %q comes back after another %s started", id, k)
			}
			if last[k] != "" {
				done[last[k]] = true
			}
			last[k] = id
		}
	}
}

func configCases() []*Case {
	return []*Case{
		{
			ID:    "modes/set-mode",
			Name:  "session/set_mode to an advertised mode returns {}, an unknown mode -32602, and the mode config option follows",
			Items: []string{"acp-v1#61", "acp-v1#65", "acp-v1#60"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				sid, res := t.NewSessionResult(c, t.Cwd)
				modes := getArray(res, "modes", "availableModes")
				if len(modes) < 2 {
					t.Skipf("the agent offers fewer than two session modes")
				}
				cur := getString(res, "modes", "currentModeId")
				target := ""
				for _, m := range modes {
					if id := getString(m, "id"); id != cur {
						target = id
						break
					}
				}
				t.WantEmpty(c, "session/set_mode", map[string]any{"sessionId": sid, "modeId": target}, "session/set_mode")
				m := t.Call(c, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "no-such-mode"})
				if m.Error == nil {
					t.Errorf("session/set_mode accepted an unknown mode")
				} else if t.IsDshd() {
					t.WantError(m, -32602, "an unknown mode")
				}
				modeOpt, other := "", ""
				var otherValue string
				for _, o := range getArray(res, "configOptions") {
					if getString(o, "category") == "mode" && getString(o, "type") == "select" {
						modeOpt = getString(o, "id")
					} else if getString(o, "type") == "select" && other == "" {
						other, otherValue = getString(o, "id"), getString(o, "currentValue")
					}
				}
				if modeOpt == "" || other == "" {
					return
				}
				var set json.RawMessage
				t.Do(c, "session/set_config_option", map[string]any{"sessionId": sid, "configId": other, "value": otherValue}, &set)
				for _, o := range getArray(set, "configOptions") {
					if getString(o, "id") == modeOpt && getString(o, "currentValue") != target {
						t.Errorf("after set_mode(%s) the mode config option reads %q", target, getString(o, "currentValue"))
					}
				}
			},
		},
		{
			ID:    "modes/set-mode-mid-turn",
			Name:  "session/set_mode is answered {} while a turn runs",
			Items: []string{"acp-v1#61"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(&ClientOptions{Script: "conformance.json"}, nil)
				id, seq := t.SendStreaming(c, sid, "conf-hang")
				t.WantEmpty(c, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}, "session/set_mode mid-turn")
				t.CancelTurn(c, sid, id, seq, "the running prompt")
			},
		},
		{
			ID:    "config/set-option",
			Name:  "session/set_config_option returns the complete list with the new value; unknown ids and values are -32602",
			Items: []string{"acp-v1#62", "acp-v1#63", "acp-v1#64", "acp-v1#65"},
			Run: func(t *T) {
				c := t.Connect(nil, nil)
				sid, res := t.NewSessionResult(c, t.Cwd)
				opts := getArray(res, "configOptions")
				if len(opts) == 0 {
					t.Skipf("the agent offers no config options")
				}
				var ids []string
				for _, o := range opts {
					ids = append(ids, getString(o, "id"))
				}
				for _, o := range opts {
					if getString(o, "type") != "select" {
						continue
					}
					id := getString(o, "id")
					values := selectValues(get(o, "options"))
					value := values[len(values)-1]
					var set json.RawMessage
					t.Do(c, "session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value}, &set)
					var got []string
					for _, so := range getArray(set, "configOptions") {
						got = append(got, getString(so, "id"))
						if getString(so, "id") == id && getString(so, "currentValue") != value {
							t.Errorf("after setting %s to %q the response reads %q", id, value, getString(so, "currentValue"))
						}
					}
					if !slices.Contains(got, id) {
						t.Errorf("set_config_option(%s) answered options %v without the option it set", id, got)
					}
					// Dependent options may come and go with a value (a
					// model with a reasoning setting); a list that only
					// lost options is a partial one.
					if lost, added := listDiff(ids, got); len(lost) > 0 && len(added) == 0 {
						t.Errorf("set_config_option answered options %v, lacking %v: it must return the complete list", got, lost)
					} else if len(lost)+len(added) > 0 {
						t.Logf("setting %s=%s changed the options: %v added, %v gone", id, value, added, lost)
					}
					ids = got
					if getString(o, "category") == "mode" && len(getArray(res, "modes", "availableModes")) > 0 {
						t.Barrier(c)
					}
				}
				if t.IsDshd() {
					t.WantError(t.Call(c, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "no-such-option", "value": "x"}), -32602, "an unknown configId")
					t.WantError(t.Call(c, "session/set_config_option", map[string]any{"sessionId": sid, "configId": ids[0], "value": "no-such-value"}), -32602, "an invalid value")
				}
			},
		},
	}
}
