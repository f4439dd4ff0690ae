// Tests of the session lifecycle: new, close, load (replay), resume (no
// replay), delete, list with cursors, titles and usage, modes and config
// options.

package server_test

import (
	"testing"

	"github.com/dshd/dshd/acp"
)

const hangScript = `{"rules": [
  {"user": "hang", "text": "Working on it", "chunk": 4, "hang": true},
  {"text": "You said: {{user}}", "chunk": 5}
]}`

func TestSessionLifecycle(t *testing.T) {
	h := newHarness(t, hopts{script: hangScript})
	sid := h.newSession()
	h.mustPrompt(sid, "first words", acp.StopReasonEndTurn)
	if got := agentText(h.ed.of(sid)); got != "You said: first words" {
		t.Fatalf("answer %q", got)
	}
	live := h.ed.of(sid)

	t.Run("close frees the session; a prompt on it is resource-not-found", func(t *testing.T) {
		if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		_, err := h.prompt(sid, "still there?")
		wantCode(t, "prompt after close", err, -32002)
		_, err = h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid})
		wantCode(t, "second close", err, -32002)
	})

	t.Run("load replays the conversation before answering", func(t *testing.T) {
		h.ed.reset()
		if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
			t.Fatal(err)
		}
		replay := h.ed.of(sid)
		users := ofType[*acp.UserMessageChunk](replay)
		if len(users) != 1 || users[0].Content.(*acp.TextContent).Text != "first words" {
			t.Fatalf("replayed user chunks %v", users)
		}
		if got := agentText(replay); got != agentText(live) {
			t.Fatalf("replayed answer %q, want %q", got, agentText(live))
		}
		if len(ofType[*acp.SessionInfoUpdate](replay)) != 1 {
			t.Fatalf("the title update is not replayed")
		}
		// The loaded session continues the conversation.
		h.mustPrompt(sid, "second words", acp.StopReasonEndTurn)
		// Loading it again on this connection replays it again (clients
		// reload threads), the second turn included.
		h.ed.reset()
		if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
			t.Fatalf("load of an open session: %v", err)
		}
		if users := ofType[*acp.UserMessageChunk](h.ed.of(sid)); len(users) != 2 {
			t.Fatalf("the reload replayed %d user chunks, want 2", len(users))
		}
		if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("resume reopens without replaying", func(t *testing.T) {
		h.ed.reset()
		if _, err := h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
			t.Fatal(err)
		}
		for _, u := range h.ed.of(sid) {
			// State only (usage, the commands), never history.
			switch u.(type) {
			case *acp.UsageUpdate, *acp.AvailableCommandsUpdate:
			default:
				t.Fatalf("resume sent %T", u)
			}
		}
		h.mustPrompt(sid, "third words", acp.StopReasonEndTurn)
		if got := agentText(h.ed.of(sid)); got != "You said: third words" {
			t.Fatalf("answer after resume %q", got)
		}
	})

	t.Run("load with another cwd is refused", func(t *testing.T) {
		if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		_, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: t.TempDir()})
		wantCode(t, "load with another cwd", err, -32602)
	})

	t.Run("delete removes it for good", func(t *testing.T) {
		if _, err := h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.client.DeleteSession(h.ctx, &acp.DeleteSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		if h.store.Exists(string(sid)) {
			t.Fatal("the journal outlived delete")
		}
		_, err := h.prompt(sid, "gone?")
		wantCode(t, "prompt after delete", err, -32002)
		_, err = h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd})
		wantCode(t, "load after delete", err, -32002)
		list, err := h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Sessions {
			if s.SessionID == sid {
				t.Fatal("a deleted session is listed")
			}
		}
		if _, err := h.client.DeleteSession(h.ctx, &acp.DeleteSessionRequest{SessionID: "s_unknown"}); err != nil {
			t.Fatalf("delete of an unknown id: %v, want success", err)
		}
	})
}

func TestTitleFromTheFirstPromptAndUsageUpdates(t *testing.T) {
	h := newHarness(t, hopts{})
	sid := h.newSession()
	// session/new is followed by the usage state.
	h.ed.waitUntil(h.ctx, t, "usage_update after session/new", func() bool {
		return len(ofType[*acp.UsageUpdate](h.ed.of(sid))) > 0
	})
	long := "Fix the flaky test in the parser package, the one that fails on CI every other run and nobody knows why\nmore detail"
	h.mustPrompt(sid, long, acp.StopReasonEndTurn)
	h.mustPrompt(sid, "and another thing", acp.StopReasonEndTurn)
	infos := ofType[*acp.SessionInfoUpdate](h.ed.of(sid))
	if len(infos) != 1 {
		t.Fatalf("%d session_info_update, want one, from the first prompt", len(infos))
	}
	title, ok := infos[0].Title.Get()
	if !ok || title == "" || len([]rune(title)) > 80 || title[:10] != "Fix the fl" {
		t.Fatalf("title %q", title)
	}
	if _, ok := infos[0].UpdatedAt.Get(); !ok {
		t.Fatal("session_info_update without updatedAt")
	}
	usage := ofType[*acp.UsageUpdate](h.ed.of(sid))
	last := usage[len(usage)-1]
	if len(usage) < 2 || last.Size == 0 || last.Used == 0 {
		t.Fatalf("usage updates %+v: want one per turn with used > 0", usage)
	}
	list, err := h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Title != title || list.Sessions[0].UpdatedAt == "" {
		t.Fatalf("list %+v, want the title and updatedAt", list.Sessions)
	}
}

func TestListPagesWithCursorsAndFiltersByCwd(t *testing.T) {
	h := newHarness(t, hopts{})
	const n = 120
	want := map[acp.SessionID]bool{}
	for range n {
		want[h.newSession()] = true
	}
	other := t.TempDir()
	if _, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: other, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	seen := map[acp.SessionID]bool{}
	cursor, pages := "", 0
	for {
		resp, err := h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{Cwd: h.cwd, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range resp.Sessions {
			if !want[s.SessionID] || seen[s.SessionID] {
				t.Fatalf("unexpected or repeated session %s (cwd %s)", s.SessionID, s.Cwd)
			}
			seen[s.SessionID] = true
		}
		if resp.NextCursor == "" {
			break
		}
		cursor = resp.NextCursor
	}
	if len(seen) != n || pages < 3 {
		t.Fatalf("listed %d of %d in %d pages", len(seen), n, pages)
	}
	all, err := h.client.ListSessions(h.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.NextCursor == "" {
		t.Fatal("an unfiltered list of 121 sessions fits one page")
	}
	_, err = h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{Cursor: "not-a-cursor"})
	wantCode(t, "invalid cursor", err, -32602)
	_, err = h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{Cwd: "relative"})
	wantCode(t, "relative cwd", err, -32602)
}

func TestCloseDuringATurnCancelsIt(t *testing.T) {
	h := newHarness(t, hopts{script: hangScript})
	sid := h.newSession()
	turn := h.promptAsync(sid, "hang")
	h.ed.waitUntil(h.ctx, t, "the turn's first words", func() bool { return agentText(h.ed.of(sid)) == "Working on it" })
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if r := h.await(turn); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("the closed turn answered %v, %v; want cancelled", r.stop, r.err)
	}
	_, err := h.prompt(sid, "again")
	wantCode(t, "prompt after close", err, -32002)
	// The journal is consistent: the session loads and goes on.
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(sid, "after the close", acp.StopReasonEndTurn)
}

func TestCancelEndsTheTurnWithCancelledAfterItsUpdates(t *testing.T) {
	h := newHarness(t, hopts{script: hangScript})
	sid := h.newSession()
	turn := h.promptAsync(sid, "hang")
	h.ed.waitUntil(h.ctx, t, "the turn's first words", func() bool { return agentText(h.ed.of(sid)) == "Working on it" })
	_, err := h.prompt(sid, "concurrently")
	wantCode(t, "a second prompt while one runs", err, -32602)
	h.cancelTurn(sid, turn)
	h.mustPrompt(sid, "next", acp.StopReasonEndTurn)
}

func TestModesAndConfigOptions(t *testing.T) {
	h := newHarness(t, hopts{})
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	if resp.Modes == nil || resp.Modes.CurrentModeID != "ask" || len(resp.Modes.AvailableModes) != 3 {
		t.Fatalf("modes %+v", resp.Modes)
	}
	current := func(opts []acp.SessionConfigOption, id string) string {
		for _, o := range opts {
			if s, ok := o.(*acp.SelectConfigOption); ok && s.ID == id {
				return s.CurrentValue
			}
		}
		t.Fatalf("no config option %q", id)
		return ""
	}
	if current(resp.ConfigOptions, "model") != h.model || current(resp.ConfigOptions, "mode") != "ask" {
		t.Fatalf("config options %+v", resp.ConfigOptions)
	}

	t.Run("set_mode announces current_mode_update and config_option_update", func(t *testing.T) {
		h.ed.reset()
		if _, err := h.client.SetSessionMode(h.ctx, &acp.SetSessionModeRequest{SessionID: sid, ModeID: "yolo"}); err != nil {
			t.Fatal(err)
		}
		us := h.ed.of(sid)
		modes := ofType[*acp.CurrentModeUpdate](us)
		cfgs := ofType[*acp.ConfigOptionUpdate](us)
		if len(modes) != 1 || modes[0].CurrentModeID != "yolo" || len(cfgs) != 1 || current(cfgs[0].ConfigOptions, "mode") != "yolo" {
			t.Fatalf("updates after set_mode: %v", us)
		}
	})

	t.Run("set_config_option mode answers the whole list and announces it", func(t *testing.T) {
		h.ed.reset()
		r, err := h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "mode", Value: acp.SelectValue("accept-edits")})
		if err != nil {
			t.Fatal(err)
		}
		if current(r.ConfigOptions, "mode") != "accept-edits" || current(r.ConfigOptions, "model") != h.model {
			t.Fatalf("answer %+v", r.ConfigOptions)
		}
		if ms := ofType[*acp.CurrentModeUpdate](h.ed.of(sid)); len(ms) != 1 || ms[0].CurrentModeID != "accept-edits" {
			t.Fatalf("current_mode_update %v", ms)
		}
	})

	t.Run("set_config_option model with a known model", func(t *testing.T) {
		r, err := h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "model", Value: acp.SelectValue(h.model)})
		if err != nil {
			t.Fatal(err)
		}
		if current(r.ConfigOptions, "model") != h.model {
			t.Fatalf("answer %+v", r.ConfigOptions)
		}
	})

	t.Run("unknown values are invalid params", func(t *testing.T) {
		_, err := h.client.SetSessionMode(h.ctx, &acp.SetSessionModeRequest{SessionID: sid, ModeID: "reckless"})
		wantCode(t, "unknown mode", err, -32602)
		_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "mode", Value: acp.SelectValue("reckless")})
		wantCode(t, "unknown mode value", err, -32602)
		_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "model", Value: acp.SelectValue("gpt-17")})
		wantCode(t, "unknown model", err, -32602)
		_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "temperature", Value: acp.SelectValue("hot")})
		wantCode(t, "unknown option", err, -32602)
		_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "mode", Value: acp.BoolValue(true)})
		wantCode(t, "a boolean for a select", err, -32602)
	})

	t.Run("the mode survives a reload", func(t *testing.T) {
		if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		r, err := h.client.ResumeSession(h.ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd})
		if err != nil {
			t.Fatal(err)
		}
		if r.Modes.CurrentModeID != "accept-edits" {
			t.Fatalf("mode after resume %q", r.Modes.CurrentModeID)
		}
	})
}
