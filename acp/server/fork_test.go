// Tests of the unstable session/fork: a fork starts from its source's
// history, then each session goes its own way, in memory and on disk.

package server_test

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
)

// recordingModel is the scripted model of hangScript that keeps the
// user messages of every request it answers.
type recordingModel struct {
	inner llm.Model
	mu    sync.Mutex
	calls [][]string
}

func newRecordingModel(t *testing.T) *recordingModel {
	m, err := scripted.Parse([]byte(hangScript))
	if err != nil {
		t.Fatal(err)
	}
	return &recordingModel{inner: m}
}

func (m *recordingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	var users []string
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleUser {
			users = append(users, msg.Content)
		}
	}
	m.mu.Lock()
	m.calls = append(m.calls, users)
	m.mu.Unlock()
	return m.inner.Stream(ctx, req)
}

// lastCallEndingWith returns the user messages of the last request whose
// last user message is last.
func (m *recordingModel) lastCallEndingWith(last string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.calls) - 1; i >= 0; i-- {
		if c := m.calls[i]; len(c) > 0 && c[len(c)-1] == last {
			return c
		}
	}
	return nil
}

func (h *harness) fork(sid acp.SessionID) (*acp.ForkSessionResponse, error) {
	return h.client.ForkSession(h.ctx, &acp.ForkSessionRequest{SessionID: sid, Cwd: h.cwd})
}

// userTexts are the user_message_chunk texts among us.
func userTexts(us []acp.SessionUpdate) []string {
	var out []string
	for _, u := range ofType[*acp.UserMessageChunk](us) {
		out = append(out, u.Content.(*acp.TextContent).Text)
	}
	return out
}

func (h *harness) reload(sid acp.SessionID) []acp.SessionUpdate {
	h.t.Helper()
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		h.t.Fatal(err)
	}
	h.ed.reset()
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		h.t.Fatal(err)
	}
	return h.ed.of(sid)
}

func TestAForkStartsFromItsSourceAndThenBothGoTheirOwnWay(t *testing.T) {
	m := newRecordingModel(t)
	h := newHarness(t, hopts{model: m})
	src := h.newSession()
	h.mustPrompt(src, "the shared start", acp.StopReasonEndTurn)

	resp, err := h.fork(src)
	if err != nil {
		t.Fatal(err)
	}
	fork := resp.SessionID
	if fork == "" || fork == src || resp.Modes == nil || len(resp.ConfigOptions) == 0 {
		t.Fatalf("fork response %+v", resp)
	}
	h.mustPrompt(src, "only the source", acp.StopReasonEndTurn)
	h.mustPrompt(fork, "only the fork", acp.StopReasonEndTurn)

	if got, want := m.lastCallEndingWith("only the source"), []string{"the shared start", "only the source"}; !slices.Equal(got, want) {
		t.Errorf("the source's request has user messages %q, want %q", got, want)
	}
	if got, want := m.lastCallEndingWith("only the fork"), []string{"the shared start", "only the fork"}; !slices.Equal(got, want) {
		t.Errorf("the fork's request has user messages %q, want %q", got, want)
	}
	if got := agentText(h.ed.of(fork)); got != "You said: only the fork" {
		t.Errorf("the fork answered %q", got)
	}

	// Each has its own journal: a load replays its own history.
	if got, want := userTexts(h.reload(fork)), []string{"the shared start", "only the fork"}; !slices.Equal(got, want) {
		t.Errorf("the fork's replay has prompts %q, want %q", got, want)
	}
	h.mustPrompt(fork, "after the load", acp.StopReasonEndTurn)
	if got, want := m.lastCallEndingWith("after the load"), []string{"the shared start", "only the fork", "after the load"}; !slices.Equal(got, want) {
		t.Errorf("the loaded fork's request has user messages %q, want %q", got, want)
	}
	if got, want := userTexts(h.reload(src)), []string{"the shared start", "only the source"}; !slices.Equal(got, want) {
		t.Errorf("the source's replay has prompts %q, want %q", got, want)
	}
	for _, n := range h.ed.all() {
		if n.SessionID != src {
			t.Errorf("the source's replay has an update for %s", n.SessionID)
		}
	}
	list, err := h.client.ListSessions(h.ctx, &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 2 {
		t.Errorf("session/list has %d sessions, want the source and the fork", len(list.Sessions))
	}
}

func TestASessionOpenNowhereForksFromItsJournal(t *testing.T) {
	m := newRecordingModel(t)
	h := newHarness(t, hopts{model: m})
	src := h.newSession()
	h.mustPrompt(src, "written down", acp.StopReasonEndTurn)
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: src}); err != nil {
		t.Fatal(err)
	}
	resp, err := h.fork(src)
	if err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(resp.SessionID, "next", acp.StopReasonEndTurn)
	if got, want := m.lastCallEndingWith("next"), []string{"written down", "next"}; !slices.Equal(got, want) {
		t.Errorf("the fork's request has user messages %q, want %q", got, want)
	}
	// The source was only read: it loads as it was.
	h.ed.reset()
	if _, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: src, Cwd: h.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := userTexts(h.ed.of(src)); !slices.Equal(got, []string{"written down"}) {
		t.Errorf("the source's replay has prompts %q", got)
	}
}

func TestAForkIsRefusedWhereItCannotBeMade(t *testing.T) {
	h := newHarness(t, hopts{script: hangScript})
	src := h.newSession()
	running := h.promptAsync(src, "hang here")
	h.ed.waitUntil(h.ctx, t, "the hanging turn's first words", func() bool {
		return strings.Contains(agentText(h.ed.of(src)), "Work")
	})
	_, err := h.fork(src)
	if e := wantCode(t, "a fork during a turn", err, -32602); e != nil && !strings.Contains(e.Error(), "turn in progress") {
		t.Errorf("error %v does not say why", e)
	}
	h.cancel(src)
	if r := h.await(running); r.stop != acp.StopReasonCancelled {
		t.Fatalf("the turn ended %+v", r)
	}
	if _, err := h.fork(src); err != nil {
		t.Errorf("a fork once the turn ended: %v", err)
	}

	_, err = h.fork("s_nope")
	wantCode(t, "a fork of an unknown session", err, -32002)
	_, err = h.fork(src + "/sa1")
	wantCode(t, "a fork of a subagent session", err, -32602)
	_, err = h.client.ForkSession(h.ctx, &acp.ForkSessionRequest{SessionID: src, Cwd: "relative"})
	wantCode(t, "a fork with a relative cwd", err, -32602)
}

func TestInitializeAdvertisesForkAsAnObject(t *testing.T) {
	h := newHarness(t, hopts{})
	resp, err := h.client.Initialize(h.ctx, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatal("sessionCapabilities.fork is not advertised")
	}
}
