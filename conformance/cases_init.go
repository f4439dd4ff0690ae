// This file holds the initialization, capability and authentication
// cases.

package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
)

func initCases() []*Case {
	return []*Case{
		{
			ID:    "init/agent-info",
			Name:  "the initialize result carries agentInfo with a non-empty name and version",
			Items: []string{"acp-v1#22"},
			Run: func(t *T) {
				c := t.Start(nil)
				res := t.Init(c, nil)
				if getString(res, "agentInfo", "name") == "" || getString(res, "agentInfo", "version") == "" {
					t.Errorf("agentInfo lacks a name or a version: %s", clip(get(res, "agentInfo"), 200))
				}
			},
		},
		{
			ID:    "init/result-shape",
			Name:  "the initialize result's agentCapabilities is an object and authMethods an array, and it validates",
			Items: []string{"acp-v1#16"},
			Run: func(t *T) {
				c := t.Start(nil)
				res := t.Init(c, nil)
				if v := get(res, "agentCapabilities"); v != nil && !isObject(v) && !isNull(v) {
					t.Errorf("agentCapabilities is %s, not an object", clip(v, 80))
				}
				if v := get(res, "authMethods"); v != nil && !isNull(v) && getArray(res, "authMethods") == nil && string(v) != "[]" {
					t.Errorf("authMethods is %s, not an array", clip(v, 80))
				}
			},
		},
		{
			ID:    "init/terminal-auth-gated",
			Name:  "a terminal auth method is listed only for a client that sent auth.terminal",
			Items: []string{"acp-v1#21", "acp-v1#16"},
			Run: func(t *T) {
				t.Connect(nil, map[string]any{"auth": map[string]any{"terminal": false}})
				t.Connect(nil, map[string]any{"auth": map[string]any{"terminal": true}})
			},
		},
		{
			ID:    "init/baseline",
			Name:  "with no client capabilities, session/new, prompts with text and resource_link, session/cancel and updates work",
			Items: []string{"acp-v1#18", "acp-v1#38", "acp-v1#39"},
			Run: func(t *T) {
				c, sid := t.Open(nil, nil)
				id, seq := t.SendPromptBlocks(c, sid, Text("Look at this file:"), map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(t.Cwd, "README.md"), "name": "README.md", "mimeType": "text/markdown"})
				turn := t.Finish(c, id, seq)
				if turn.Resp.Msg.Error != nil {
					t.Fatalf("a prompt with text and resource_link failed: %v", turn.Resp.Msg.Error)
				}
				if len(c.Updates(seq, sid)) == 0 {
					t.Errorf("the turn produced no session/update")
				}
				t.Cancel(c, sid)
				t.Barrier(c)
			},
		},
		capCase("cap/load", "loadSession", "loadSession: true is backed by a working session/load", func(t *T) {
			c, sid := t.Open(nil, nil)
			t.Prompt(c, sid, "remember this")
			c2 := t.Reconnect(c, nil, nil)
			t.Do(c2, "session/load", map[string]any{"sessionId": sid, "cwd": t.Cwd, "mcpServers": []any{}}, nil)
		}),
		capCase("cap/resume", "sessionCapabilities.resume", "sessionCapabilities.resume is backed by a working session/resume", func(t *T) {
			c, sid := t.Open(nil, nil)
			t.Prompt(c, sid, "remember this")
			c2 := t.Reconnect(c, nil, nil)
			t.Do(c2, "session/resume", map[string]any{"sessionId": sid, "cwd": t.Cwd}, nil)
		}),
		capCase("cap/close", "sessionCapabilities.close", "sessionCapabilities.close is backed by a working session/close", func(t *T) {
			c, sid := t.Open(nil, nil)
			t.WantEmpty(c, "session/close", map[string]any{"sessionId": sid}, "session/close")
		}),
		capCase("cap/list", "sessionCapabilities.list", "sessionCapabilities.list is backed by a working session/list", func(t *T) {
			c := t.Connect(nil, nil)
			var res json.RawMessage
			t.Do(c, "session/list", map[string]any{}, &res)
			if getArray(res, "sessions") == nil && string(get(res, "sessions")) != "[]" {
				t.Errorf("session/list answered %s without a sessions array", clip(res, 200))
			}
		}),
		capCase("cap/delete", "sessionCapabilities.delete", "sessionCapabilities.delete is backed by a working session/delete", func(t *T) {
			c, sid := t.Open(nil, nil)
			t.WantEmpty(c, "session/delete", map[string]any{"sessionId": sid}, "session/delete")
		}),
		capCase("cap/additional-directories", "sessionCapabilities.additionalDirectories", "sessionCapabilities.additionalDirectories accepts an absolute extra root", func(t *T) {
			c := t.Connect(nil, nil)
			extra := filepath.Join(t.Dir, "extra")
			if err := os.Mkdir(extra, 0o755); err != nil {
				t.Fatalf("%v", err)
			}
			t.Do(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}, "additionalDirectories": []string{extra}}, nil)
		}),
		capCase("cap/mcp-http", "mcpCapabilities.http", "mcpCapabilities.http: session/new takes a type:http MCP server entry (an unreachable server may be reported, but the entry is not invalid params)", func(t *T) {
			mcpEntry(t, map[string]any{"type": "http", "name": "conformance-http", "url": "http://127.0.0.1:9/mcp", "headers": []any{map[string]any{"name": "Authorization", "value": "Bearer x"}}})
		}),
		capCase("cap/mcp-sse", "mcpCapabilities.sse", "mcpCapabilities.sse: session/new takes a type:sse MCP server entry (an unreachable server may be reported, but the entry is not invalid params)", func(t *T) {
			mcpEntry(t, map[string]any{"type": "sse", "name": "conformance-sse", "url": "http://127.0.0.1:9/sse", "headers": []any{}})
		}),
		capCase("cap/logout", "auth.logout", "auth.logout is backed by a logout that returns {}", func(t *T) {
			c := t.Connect(nil, nil)
			t.WantEmpty(c, "logout", map[string]any{}, "logout")
		}),
		capCase("cap/prompt-image", "promptCapabilities.image", "promptCapabilities.image: a prompt with an image block is accepted", func(t *T) {
			c, sid := t.Open(nil, nil)
			promptWith(t, c, sid, map[string]any{"type": "image", "mimeType": "image/png", "data": tinyPNG})
		}),
		capCase("cap/prompt-audio", "promptCapabilities.audio", "promptCapabilities.audio: a prompt with an audio block is accepted", func(t *T) {
			c, sid := t.Open(nil, nil)
			promptWith(t, c, sid, map[string]any{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="})
		}),
		capCase("cap/prompt-embedded", "promptCapabilities.embeddedContext", "promptCapabilities.embeddedContext: a prompt with resource blocks is accepted", func(t *T) {
			c, sid := t.Open(nil, nil)
			promptWith(t, c, sid,
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x/cart.go", "mimeType": "text/x-go", "text": "package shop\n"}},
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x/logo.bin", "blob": "AAEC"}})
		}),
		{
			ID:    "auth/required",
			Name:  "an agent that requires login answers session/new with -32000 before authenticate",
			Items: []string{"acp-v1#23"},
			Run: func(t *T) {
				c := t.Start(nil)
				res := t.Init(c, nil)
				if len(getArray(res, "authMethods")) == 0 {
					t.Skipf("the agent advertises no auth methods")
				}
				m := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}})
				if m.Error == nil {
					t.Skipf("the agent advertises auth methods but does not require login")
				}
				t.WantError(m, -32000, "session/new before authenticate")
			},
		},
		{
			ID:    "auth/logout-regates",
			Name:  "after logout, session/new needs authentication again (-32000)",
			Items: []string{"acp-v1#24"},
			Needs: []string{"auth.logout"},
			Run: func(t *T) {
				c := t.Start(nil)
				res := t.Init(c, nil)
				if before := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}}); before.Error == nil {
					// Logging out re-gates what login opened; here nothing
					// was gated (no login needed, as dshd on stdio or an
					// agent on a provider without accounts).
					t.Skipf("session/new works without authenticate (auth methods: %s), so logout has nothing to re-gate", clip(get(res, "authMethods"), 120))
				}
				t.Do(c, "logout", map[string]any{}, nil)
				t.WantError(t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{}}), -32000, "session/new after logout")
			},
		},
	}
}

// tinyPNG is a 1×1 PNG.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="

func capCase(id, need, name string, run func(t *T)) *Case {
	return &Case{ID: id, Name: name, Items: []string{"acp-v1#17"}, Needs: []string{need}, Run: run}
}

// mcpEntry opens a session with one MCP server entry of an advertised
// transport: the entry must be accepted as well-formed.
func mcpEntry(t *T, server map[string]any) {
	c := t.Connect(nil, nil)
	m := t.Call(c, "session/new", map[string]any{"cwd": t.Cwd, "mcpServers": []any{server}})
	if m.Error != nil && m.Error.Code == -32602 {
		t.Errorf("a %s MCP server entry was refused as invalid although the transport is advertised: %v", server["type"], m.Error)
	}
}

func promptWith(t *T, c *Client, sid string, blocks ...any) {
	id, seq := t.SendPromptBlocks(c, sid, append([]any{Text("What is in here?")}, blocks...)...)
	if turn := t.Finish(c, id, seq); turn.Resp.Msg.Error != nil {
		t.Errorf("an advertised content block was refused: %v", turn.Resp.Msg.Error)
	}
}
