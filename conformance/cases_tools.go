// This file holds the tool cases, all driven by dshd's scripted model:
// client fs and terminals with and without the capabilities, confinement,
// permission modes, rejection, cancellation with a pending permission,
// -32800 and null answers, plans and diffs.

package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// scripted is the options of a dshd case using the conformance script.
func scripted(mode string, handlers map[string]Handler) *ClientOptions {
	o := &ClientOptions{Script: "conformance.json", Handlers: handlers}
	if mode != "" {
		o.Args = []string{"--mode", mode}
	}
	return o
}

// asking is the options of a dshd case in ask mode whose permission
// requests the handler answers (nil: the case answers them itself).
func asking(permission Handler) *ClientOptions {
	return scripted("ask", map[string]Handler{"session/request_permission": permission})
}

func writeFile(t *T, path, content string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("%v", err)
	}
}

func readFile(t *T, path string) (string, bool) {
	b, err := os.ReadFile(path)
	return string(b), err == nil
}

// cwdFile reads name in the session cwd, where the scripted tools write;
// ok is false when there is no such file.
func cwdFile(t *T, name string) (string, bool) {
	return readFile(t, filepath.Join(t.Cwd, name))
}

// requests returns the agent's requests with one of the methods.
func requests(c *Client, methods ...string) []*Line {
	return c.Messages(0, func(m *Msg) bool { return m.IsRequest() && slices.Contains(methods, m.Method) })
}

// lastTool returns the last tool call of sid since seq, by its updates.
func lastTool(t *T, c *Client, sid string, seq int) []json.RawMessage {
	order, byID := ToolCalls(c, sid, seq)
	if len(order) == 0 {
		t.Fatalf("the turn announced no tool call")
	}
	return byID[order[len(order)-1]]
}

func toolCases() []*Case {
	return []*Case{
		{
			ID:    "fs/no-client-capabilities",
			Name:  "with empty client capabilities, reading, writing and running commands never call fs/* or terminal/*",
			Items: []string{"acp-v1#19"},
			Dshd:  true,
			Run: func(t *T) {
				writeFile(t, filepath.Join(t.Cwd, "readme.txt"), "the readme\n")
				c, sid := t.Open(scripted("yolo", nil), nil)
				for _, p := range []string{"conf-read", "conf-write", "conf-run"} {
					t.EndTurn(c, sid, p)
				}
				if rs := requests(c, "fs/read_text_file", "fs/write_text_file", "terminal/create"); len(rs) > 0 {
					t.Errorf("the agent called %s without the client capability", rs[0].Msg.Method)
				}
				if got, _ := cwdFile(t, "notes.txt"); got != "hello from the agent\n" {
					t.Errorf("write_file did not write locally: %q", got)
				}
			},
		},
		{
			ID:    "fs/read-only-capability",
			Name:  "with fs.readTextFile only, reads go through fs/read_text_file with absolute paths and writes never through fs/write_text_file",
			Items: []string{"acp-v1#20", "acp-v1#66"},
			Dshd:  true,
			Run: func(t *T) {
				writeFile(t, filepath.Join(t.Cwd, "readme.txt"), "the readme from disk\n")
				c, sid := t.Open(scripted("yolo", FSHandlers(FSOptions{})), map[string]any{"fs": map[string]any{"readTextFile": true}})
				turn := t.EndTurn(c, sid, "conf-read")
				reads := requests(c, "fs/read_text_file")
				if len(reads) == 0 {
					t.Fatalf("read_file did not use fs/read_text_file although the client offers it")
				}
				if p := getString(reads[0].Msg.Params, "path"); p != filepath.Join(t.Cwd, "readme.txt") {
					t.Errorf("fs/read_text_file path %q, want %q", p, filepath.Join(t.Cwd, "readme.txt"))
				}
				if !strings.Contains(AgentText(c, sid, turn.Start, -1), "the readme from disk") {
					t.Errorf("the read content did not reach the model")
				}
				t.EndTurn(c, sid, "conf-write")
				if got, _ := cwdFile(t, "notes.txt"); got != "hello from the agent\n" {
					t.Errorf("write_file did not write locally: %q", got)
				}
			},
		},
		{
			ID:    "fs/client-read-write",
			Name:  "with fs read and write, the agent writes through fs/write_text_file (absolute path) and accepts a null result",
			Items: []string{"acp-v1#66", "acp-v1#67", "acp-v1#53"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", FSHandlers(FSOptions{NullWriteResult: true})), Caps{Read: true, Write: true}.JSON())
				turn := t.EndTurn(c, sid, "conf-write")
				writes := requests(c, "fs/write_text_file")
				if len(writes) != 1 {
					t.Fatalf("want one fs/write_text_file, got %d", len(writes))
				}
				if p := getString(writes[0].Msg.Params, "path"); p != filepath.Join(t.Cwd, "notes.txt") {
					t.Errorf("fs/write_text_file path %q, want %q", p, filepath.Join(t.Cwd, "notes.txt"))
				}
				if got := statuses(lastTool(t, c, sid, turn.Start)); !slices.Contains(got, "completed") {
					t.Errorf("the write tool call went %v, want it completed after a null result", got)
				}
			},
		},
		{
			ID:    "terminal/client-terminal",
			Name:  "run_command runs in a client terminal: absolute cwd, output read, embedded before release, released before the turn ends, null kill/release results accepted",
			Items: []string{"acp-v1#68", "acp-v1#69", "acp-v1#70", "acp-v1#67"},
			Dshd:  true,
			Run: func(t *T) {
				terms := &Terminals{NullResults: true}
				t.Cleanup(terms.Close)
				c, sid := t.Open(scripted("yolo", terms.Handlers()), Caps{Terminal: true}.JSON())
				turn := t.EndTurn(c, sid, "conf-run")
				if len(requests(c, "terminal/release")) == 0 {
					t.Errorf("the terminal was never released")
				}
				if !strings.Contains(AgentText(c, sid, turn.Start, -1), "command-output") {
					t.Errorf("the terminal's output did not reach the model")
				}
				embedded := false
				for _, u := range lastTool(t, c, sid, turn.Start) {
					for _, it := range getArray(u, "content") {
						embedded = embedded || getString(it, "type") == "terminal"
					}
				}
				if !embedded {
					t.Errorf("the tool call never embedded its terminal")
				}
			},
		},
		{
			ID:    "terminal/cancel-running-command",
			Name:  "cancelling a turn whose command runs in a client terminal kills and releases it before the cancelled response",
			Items: []string{"acp-v1#68", "acp-v1#41", "acp-v1#11"},
			Dshd:  true,
			Run: func(t *T) {
				terms := &Terminals{}
				t.Cleanup(terms.Close)
				c, sid := t.Open(scripted("yolo", terms.Handlers()), Caps{Terminal: true}.JSON())
				id, seq := t.SendPrompt(c, sid, "conf-run-sleep")
				t.ExpectRequest(c, seq, "terminal/wait_for_exit")
				turn := t.CancelTurn(c, sid, id, seq, "a turn cancelled during a command")
				released := false
				for _, l := range requests(c, "terminal/release") {
					released = released || l.Seq < turn.Resp.Seq
				}
				if !released {
					t.Errorf("the terminal was not released before the cancelled response")
				}
			},
		},
		{
			ID:    "terminal/request-cancelled-answer",
			Name:  "a -32800 answer to terminal/create fails the tool, not the turn",
			Items: []string{"acp-v1#74"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("yolo", map[string]Handler{"terminal/create": ErrorHandler(errRequestCancelled)}), Caps{Terminal: true}.JSON())
				turn := t.Prompt(c, sid, "conf-run")
				t.WantStop(turn, "end_turn", "a turn whose terminal/create was answered -32800")
				if got := statuses(lastTool(t, c, sid, turn.Start)); !slices.Contains(got, "failed") {
					t.Errorf("the tool call went %v, want failed", got)
				}
			},
		},
		{
			ID:    "permission/request-cancelled-answer",
			Name:  "a -32800 answer to session/request_permission does not run the tool and the turn ends without an error",
			Items: []string{"acp-v1#74", "acp-v1#55"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(ErrorHandler(errRequestCancelled)), nil)
				turn := t.Prompt(c, sid, "conf-write")
				if turn.Resp.Msg.Error != nil {
					t.Errorf("the turn failed: %v", turn.Resp.Msg.Error)
				}
				if _, ok := cwdFile(t, "notes.txt"); ok {
					t.Errorf("the tool ran although its permission request was answered -32800")
				}
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the next prompt")
			},
		},
		{
			ID:    "confinement/outside-cwd",
			Name:  "tool calls on ../outside or through a symlink out of cwd fail and leave the outside file untouched, with and without client fs",
			Items: []string{"acp-v1#27"},
			Dshd:  true,
			Run: func(t *T) {
				const secret = "TOP-SECRET-CONTENT\n"
				outside := filepath.Join(t.Dir, "outside", "secret.txt")
				writeFile(t, outside, secret)
				if err := os.Symlink(filepath.Join(t.Dir, "outside"), filepath.Join(t.Cwd, "link")); err != nil {
					t.Fatalf("%v", err)
				}
				for _, caps := range []Caps{{}, {Read: true, Write: true}} {
					c, sid := t.Open(scripted("yolo", FSHandlers(FSOptions{})), caps.JSON())
					for _, p := range []string{"conf-outside-write", "conf-outside-read", "conf-outside-edit", "conf-link-write", "conf-link-read"} {
						turn := t.Prompt(c, sid, p)
						t.WantStop(turn, "end_turn", p)
						tool := lastTool(t, c, sid, turn.Start)
						if got := statuses(tool); !slices.Contains(got, "failed") {
							t.Errorf("%s (client fs %v): the tool call went %v, want failed", p, caps.Read, got)
						}
						if strings.Contains(AgentText(c, sid, turn.Start, -1)+toolText(tool), "TOP-SECRET") {
							t.Errorf("%s: the outside file's content leaked", p)
						}
						if got, _ := readFile(t, outside); got != secret {
							t.Fatalf("%s: the file outside cwd changed to %q", p, got)
						}
					}
					for _, l := range requests(c, "fs/read_text_file", "fs/write_text_file") {
						if p := getString(l.Msg.Params, "path"); !strings.HasPrefix(p, t.Cwd+string(filepath.Separator)) || strings.Contains(p, "link") {
							t.Errorf("the agent asked the client for %s, outside the session's roots", p)
						}
					}
				}
			},
		},
		permissionModeCase("ask", true, true),
		permissionModeCase("accept-edits", false, true),
		permissionModeCase("yolo", false, false),
		{
			ID:    "permission/reject",
			Name:  "a rejected permission leaves the file unwritten and the tool call failed; reject_always is remembered",
			Items: []string{"acp-v1#56", "acp-v1#55"},
			Dshd:  true,
			Run: func(t *T) {
				var kind atomic.Value
				kind.Store("reject_once")
				c, sid := t.Open(scripted("ask", map[string]Handler{"session/request_permission": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
					return permissionOutcome(req, kind.Load().(string)), nil
				}}), nil)
				turn := t.Prompt(c, sid, "conf-write")
				t.WantStop(turn, "end_turn", "a rejected write")
				if got := statuses(lastTool(t, c, sid, turn.Start)); !slices.Contains(got, "failed") || slices.Contains(got, "completed") {
					t.Errorf("a rejected tool call went %v, want failed", got)
				}
				if _, ok := cwdFile(t, "notes.txt"); ok {
					t.Errorf("the rejected write happened")
				}
				kind.Store("reject_always")
				t.WantStop(t.Prompt(c, sid, "conf-write"), "end_turn", "a write rejected always")
				asked := len(requests(c, "session/request_permission"))
				t.WantStop(t.Prompt(c, sid, "conf-write"), "end_turn", "a write after reject_always")
				if n := len(requests(c, "session/request_permission")); n != asked {
					t.Errorf("the agent asked again after reject_always")
				}
				if _, ok := cwdFile(t, "notes.txt"); ok {
					t.Errorf("a write after reject_always happened")
				}
			},
		},
		{
			ID:    "permission/cancel-while-pending",
			Name:  "session/cancel while a permission request is pending: answered cancelled, the tool never runs, the turn ends cancelled",
			Items: []string{"acp-v1#43", "acp-v1#11", "acp-v1#41"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(nil), nil)
				t.cancelWhileAsked(c, sid, "conf-write", "a turn cancelled during a permission request")
				if _, ok := cwdFile(t, "notes.txt"); ok {
					t.Errorf("the tool ran although its permission was cancelled")
				}
				t.Barrier(c)
				t.WantStop(t.Prompt(c, sid, "hello"), "end_turn", "the next prompt")
			},
		},
		{
			ID:    "tools/plan",
			Name:  "the plan tool sends a complete, well-formed plan update",
			Items: []string{"acp-v1#57"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(scripted("", nil), nil)
				turn := t.EndTurn(c, sid, "conf-plan")
				l := t.ExpectUpdate(c, turn.Start, sid, "plan")
				if n := len(getArray(l.Msg.Update(), "entries")); n != 3 {
					t.Errorf("the plan has %d entries, want the complete list of 3", n)
				}
			},
		},
		{
			ID:    "tools/diff",
			Name:  "a new file's diff has no oldText, an edited file's diff has it, both with absolute paths",
			Items: []string{"acp-v1#53", "acp-v1#54", "acp-v1#51", "acp-v1#52"},
			Dshd:  true,
			Run: func(t *T) {
				writeFile(t, filepath.Join(t.Cwd, "edit.txt"), "alpha\n")
				c, sid := t.Open(asking(PermissionAnswer("allow_once")), nil)
				for _, tc := range []struct {
					prompt, file string
					oldText      bool
				}{{"conf-write", "notes.txt", false}, {"conf-edit", "edit.txt", true}} {
					turn := t.Prompt(c, sid, tc.prompt)
					t.WantStop(turn, "end_turn", tc.prompt)
					var diffs []json.RawMessage
					for _, l := range c.Messages(turn.Start, nil) {
						var content json.RawMessage
						switch {
						case l.Msg.Method == "session/update":
							content = get(l.Msg.Update(), "content")
						case l.Msg.Method == "session/request_permission":
							content = get(l.Msg.Params, "toolCall", "content")
						}
						for _, it := range getArray(content) {
							if getString(it, "type") == "diff" {
								diffs = append(diffs, it)
							}
						}
					}
					if len(diffs) == 0 {
						t.Errorf("%s: no diff content", tc.prompt)
					}
					for _, d := range diffs {
						if getString(d, "path") != filepath.Join(t.Cwd, tc.file) {
							t.Errorf("%s: diff path %q", tc.prompt, getString(d, "path"))
						}
						old := get(d, "oldText")
						if hasOld := old != nil && !isNull(old); hasOld != tc.oldText {
							t.Errorf("%s: diff oldText %s; want present=%v", tc.prompt, clip(old, 60), tc.oldText)
						}
					}
				}
				if got, _ := cwdFile(t, "edit.txt"); got != "beta\n" {
					t.Errorf("the edit did not apply: %q", got)
				}
			},
		},
	}
}

// permissionModeCase checks one permission mode against an edit and a
// command.
func permissionModeCase(mode string, askEdit, askExec bool) *Case {
	return &Case{
		ID:    "permission/mode-" + mode,
		Name:  "permission mode " + mode + ": edits ask=" + yesNo(askEdit) + ", commands ask=" + yesNo(askExec) + "; allowed tools run",
		Items: []string{"acp-v1#55", "acp-v1#61"},
		Dshd:  true,
		Run: func(t *T) {
			c := t.Connect(scripted("", map[string]Handler{"session/request_permission": PermissionAnswer("allow_once")}), nil)
			sid, res := t.NewSessionResult(c, t.Cwd)
			if getString(res, "modes", "currentModeId") != "ask" {
				t.Fatalf("new sessions start in mode %q, want ask (dshd's default)", getString(res, "modes", "currentModeId"))
			}
			t.Do(c, "session/set_mode", map[string]any{"sessionId": sid, "modeId": mode}, nil)
			for _, tc := range []struct {
				prompt, file string
				ask          bool
			}{{"conf-write", "notes.txt", askEdit}, {"conf-run", "ran.txt", askExec}} {
				before := len(requests(c, "session/request_permission"))
				turn := t.Prompt(c, sid, tc.prompt)
				t.WantStop(turn, "end_turn", tc.prompt)
				asked := len(requests(c, "session/request_permission")) > before
				if asked != tc.ask {
					t.Errorf("mode %s, %s: asked=%v, want %v", mode, tc.prompt, asked, tc.ask)
				}
				if _, ok := cwdFile(t, tc.file); !ok {
					t.Errorf("mode %s, %s: the allowed tool did not run", mode, tc.prompt)
				}
			}
		},
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
