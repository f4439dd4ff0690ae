// End-to-end tests of sessions from the command line: `dshd prompt` says
// which session it used and continues one with --resume or --continue;
// `dshd sessions list|show|delete` work on the state dir.

package main

import (
	"bufio"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

var sessionLine = regexp.MustCompile(`dshd: session (s_[0-9a-f-]+)`)

// sessionOf returns the session id a prompt run printed on stderr.
func sessionOf(t testing.TB, stderr string) string {
	t.Helper()
	m := sessionLine.FindAllStringSubmatch(stderr, -1)
	if len(m) != 1 {
		t.Fatalf("%d session lines on stderr, want 1:\n%s", len(m), stderr)
	}
	return m[0][1]
}

// promptIn is `dshd prompt` against srv in cwd with state dir state.
func promptAt(srv *openaitest.Server, state, cwd string, extra ...string) []string {
	return append([]string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state, "--cwd", cwd}, extra...)
}

// userTexts are the user messages of a chat request.
func userTexts(r *openaitest.ChatRequest) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" {
			out = append(out, m.Text())
		}
	}
	return out
}

func TestPromptPrintsItsSessionAndResumeOrContinueGoesOnWithIt(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		return openaitest.Text("answer to " + r.Chat.LastUserText())
	})
	state, cwd, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()

	code, stdout, stderr := runDshd(t, nil, promptAt(srv, state, cwd, "first")...)
	if code != 0 || stdout != "answer to first\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	id := sessionOf(t, stderr)

	// --resume from another directory: the session keeps its own cwd.
	code, _, stderr = runDshd(t, nil, promptAt(srv, state, elsewhere, "second")...)
	if code != 0 {
		t.Fatalf("a new session elsewhere: exit %d; stderr:\n%s", code, stderr)
	}
	other := sessionOf(t, stderr)
	args := []string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state, "--resume", id, "third"}
	code, _, stderr = runDshd(t, nil, args...)
	if code != 0 || sessionOf(t, stderr) != id {
		t.Fatalf("--resume %s: exit %d; stderr:\n%s", id, code, stderr)
	}
	reqs := srv.ChatRequests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, "|") != "first|third" {
		t.Fatalf("the resumed turn sent the user messages %q, want the session's first and the new one", got)
	}

	// --continue: the latest session of cwd, not the newer one elsewhere.
	code, _, stderr = runDshd(t, nil, promptAt(srv, state, cwd, "--continue", "fourth")...)
	if code != 0 || sessionOf(t, stderr) != id {
		t.Fatalf("--continue: exit %d, want session %s (not %s); stderr:\n%s", code, id, other, stderr)
	}
	reqs = srv.ChatRequests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, "|") != "first|third|fourth" {
		t.Fatalf("the continued turn sent %q", got)
	}

	t.Run("an unknown session is one clear line", func(t *testing.T) {
		code, _, stderr := runDshd(t, nil, promptAt(srv, state, cwd, "--resume", "s_00000000-0000-0000-0000-000000000000", "hi")...)
		if code != 1 || !strings.Contains(stderr, "no session s_00000000-0000-0000-0000-000000000000") {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
	})
	t.Run("nothing to continue in a new directory", func(t *testing.T) {
		code, _, stderr := runDshd(t, nil, promptAt(srv, state, t.TempDir(), "--continue", "hi")...)
		if code != 1 || !strings.Contains(stderr, "no session to continue in") {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
	})
	t.Run("--resume and --continue together are a usage error", func(t *testing.T) {
		code, _, stderr := runDshd(t, nil, promptAt(srv, state, cwd, "--continue", "--resume", id, "hi")...)
		if code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
		}
	})
}

func TestARunThatFailedBeforeItsFirstTurnLeavesNoSession(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 400, Error: &openaitest.Error{Message: "model m does not exist", Type: "invalid_request_error"}}
	})
	state := t.TempDir()
	code, _, stderr := runDshd(t, nil, promptAt(srv, state, t.TempDir(), "hi")...)
	if code != 1 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if j := journals(t, state); len(j) != 0 {
		t.Fatalf("sessions left behind: %v", j)
	}
	if sessionLine.MatchString(stderr) {
		t.Errorf("stderr names a session that does not exist:\n%s", stderr)
	}
}

// sessionsCmd runs `dshd sessions args...` on state.
func sessionsCmd(t testing.TB, state string, args ...string) (int, string, string) {
	t.Helper()
	return runDshd(t, nil, append(append([]string{"sessions"}, args...), "--state-dir", state)...)
}

func TestSessionsListShowAndDeleteWorkOnTheStateDir(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		openaitest.Text("Nothing here."),
		openaitest.Text("Second session."),
	)
	state, cwdA, cwdB := t.TempDir(), t.TempDir(), t.TempDir()
	_, _, errA := runDshd(t, nil, promptAt(srv, state, cwdA, "--mode", "yolo", "what is in this directory?")...)
	a := sessionOf(t, errA)
	_, _, errB := runDshd(t, nil, promptAt(srv, state, cwdB, "say something")...)
	b := sessionOf(t, errB)

	code, stdout, stderr := sessionsCmd(t, state, "list")
	if code != 0 {
		t.Fatalf("list: exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], b) || !strings.Contains(lines[2], a) ||
		!strings.Contains(lines[2], cwdA) || !strings.Contains(lines[2], "what is in this directory?") {
		t.Fatalf("list, newest first with cwd and title, under a header:\n%s", stdout)
	}

	code, stdout, _ = sessionsCmd(t, state, "list", "--cwd", cwdA, "--json")
	var listed []struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		Title     string `json:"title"`
		UpdatedAt string `json:"updatedAt"`
	}
	if err := json.Unmarshal([]byte(stdout), &listed); code != 0 || err != nil || len(listed) != 1 || listed[0].SessionID != a || listed[0].Cwd != cwdA || listed[0].UpdatedAt == "" {
		t.Fatalf("list --cwd --json: exit %d, %v:\n%s", code, err, stdout)
	}

	code, stdout, stderr = sessionsCmd(t, state, "show", a)
	if code != 0 {
		t.Fatalf("show: exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{a, cwdA, "> what is in this directory?", "→ List", "✓ List", "Nothing here."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Index(stdout, "> what is in") > strings.Index(stdout, "Nothing here.") {
		t.Errorf("show is out of order:\n%s", stdout)
	}

	code, stdout, _ = sessionsCmd(t, state, "show", a, "--json")
	kinds := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		}
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil || n.SessionID != a {
			t.Fatalf("show --json line %q: %v", sc.Text(), err)
		}
		kinds[n.Update.Kind] = true
	}
	if code != 0 || !kinds["user_message_chunk"] || !kinds["agent_message_chunk"] || !kinds["tool_call"] {
		t.Fatalf("show --json: exit %d, kinds %v", code, kinds)
	}

	code, _, stderr = sessionsCmd(t, state, "delete", a)
	if code != 0 {
		t.Fatalf("delete: exit %d; stderr:\n%s", code, stderr)
	}
	_, stdout, _ = sessionsCmd(t, state, "list")
	if strings.Contains(stdout, a) || !strings.Contains(stdout, b) {
		t.Fatalf("after delete, list:\n%s", stdout)
	}
	for _, args := range [][]string{{"show", a}, {"delete", a}} {
		code, _, stderr = sessionsCmd(t, state, args...)
		if code != 1 || !strings.Contains(stderr, "no session "+a) {
			t.Errorf("%v of a deleted session: exit %d; stderr:\n%s", args, code, stderr)
		}
	}

	t.Run("sessions needs no model key and offers only its settings", func(t *testing.T) {
		code, _, help := runDshd(t, nil, "sessions", "list", "--help")
		if code != 0 || !strings.Contains(help, "--state-dir") || strings.Contains(help, "--model") {
			t.Fatalf("exit %d; help:\n%s", code, help)
		}
	})
}
