// End-to-end tests of shutdown and durability: signals and stdin EOF
// cancel running turns and exit 0; a daemon killed mid-turn, a torn
// journal line and a client that disconnects mid-turn all leave sessions
// that load with every update the client saw.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// hangScript streams a few chunks, then blocks until cancelled.
const hangScript = `{"rules": [
  {"user": "hang", "text": "Working on it, step by step", "chunk": 4, "hang": true},
  {"text": "You said: {{user}}"}
]}`

const hangText = "Working on it, step by step"

// hangingTurn creates a session and starts a turn that hangs once it has
// streamed hangText; it returns when the client has received all of it.
func hangingTurn(ctx context.Context, t testing.TB, c *wire, cwd string) (sid string, answer <-chan *msg) {
	t.Helper()
	sid = c.openSession(ctx, cwd)
	answer = c.promptAsync(sid, "hang")
	c.waitUpdates(ctx, sid, textIs(hangText))
	return sid, answer
}

// loadSession starts a fresh daemon on state, loads sid and returns the
// replayed updates and the client.
func loadSession(ctx context.Context, t testing.TB, script, state, sid, cwd string) (*proc, *wire, []note) {
	t.Helper()
	p, c := stdioDaemon(t, script, state)
	c.initialize(ctx, nil)
	c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	return p, c, c.updates(sid)
}

// canonical re-encodes JSON so equal values compare equal as strings.
func canonical(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkReplay checks that every update the client received live (except
// usage_update and available_commands_update, which are state, not
// history, and sent afresh on load) comes back in the replay, in order,
// and that the user's prompt is replayed too.
func checkReplay(t testing.TB, live, replay []note, prompt string) {
	t.Helper()
	j := 0
	for _, n := range live {
		if n.Kind == "usage_update" || n.Kind == "available_commands_update" {
			continue
		}
		want := canonical(n.Update)
		for j < len(replay) && canonical(replay[j].Update) != want {
			j++
		}
		if j == len(replay) {
			t.Fatalf("live update %s is missing from the replay (or out of order); replay:\n%s", want, dump(replay))
		}
		j++
	}
	found := false
	for _, n := range replay {
		if n.Kind == "user_message_chunk" && strings.Contains(string(n.Update), prompt) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the prompt %q is not replayed:\n%s", prompt, dump(replay))
	}
}

func dump(ns []note) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(string(n.Update))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestShutdownCancelsTurnsFlushesJournalsAndExitsZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(p *proc)
		// answered: the cancelled prompt's answer still reaches the client.
		answered bool
	}{
		{"SIGINT", func(p *proc) { p.signal(syscall.SIGINT) }, true},
		{"SIGTERM", func(p *proc) { p.signal(syscall.SIGTERM) }, true},
		{"stdin EOF", func(p *proc) { p.stdin.Close() }, false},
		// The client goes away mid-turn.
		{"both pipes close", func(p *proc) { p.stdin.Close(); p.stdout.Close() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			script, state, cwd := writeScript(t, hangScript), t.TempDir(), t.TempDir()
			p, c := stdioDaemon(t, script, state)
			sid, answer := hangingTurn(ctx, t, c, cwd)
			tc.stop(p)
			if tc.answered {
				if got := stopReason(ctx, t, answer); got != "cancelled" {
					t.Fatalf("stop reason %q, want cancelled", got)
				}
			}
			if code := p.wait(ctx); code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr)
			}
			live := c.updates(sid)

			p2, c2, replay := loadSession(ctx, t, script, state, sid, cwd)
			checkReplay(t, live, replay, "hang")
			c2.endTurn(ctx, sid, "after restart")
			p2.hangUp(ctx)
		})
	}
}

func TestRequestsReadBeforeStdinEOFAreAnswered(t *testing.T) {
	// A script pipes its requests and closes stdin: `printf ... | dshd`.
	ctx := testkit.Context(t)
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}` + "\n"
	p := start(t, opts{stdin: strings.NewReader(input)}, "--model", "scripted", "--state-dir", t.TempDir())
	c := newWire(t, p.stdout, nil, nil)
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	<-c.done
	c.mu.Lock()
	answered := len(c.unmatched)
	c.mu.Unlock()
	if answered != 2 {
		t.Fatalf("%d of 2 requests answered before exit", answered)
	}
}

func TestSIGKILLMidTurnLosesNoSentUpdate(t *testing.T) {
	ctx := testkit.Context(t)
	script, state, cwd := writeScript(t, hangScript), t.TempDir(), t.TempDir()
	p, c := stdioDaemon(t, script, state)
	sid, _ := hangingTurn(ctx, t, c, cwd)
	p.signal(syscall.SIGKILL)
	p.wait(ctx)
	live := c.updates(sid)
	if len(live) < 3 {
		t.Fatalf("only %d updates before the kill", len(live))
	}

	p2, c2, replay := loadSession(ctx, t, script, state, sid, cwd)
	checkReplay(t, live, replay, "hang")
	c2.endTurn(ctx, sid, "after the crash")
	if got := text(c2.updates(sid)); !strings.HasSuffix(got, "You said: after the crash") {
		t.Fatalf("text after the crash: %q", got)
	}
	if code := p2.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestTornLastJournalLineIsSkippedWithAWarning(t *testing.T) {
	ctx := testkit.Context(t)
	script, state, cwd := writeScript(t, hangScript), t.TempDir(), t.TempDir()
	p, c := stdioDaemon(t, script, state)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "first turn")
	p.hangUp(ctx)
	live := c.updates(sid)

	journal := filepath.Join(state, "sessions", sid+".jsonl")
	before, err := os.ReadFile(journal)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	if !bytes.HasSuffix(before, []byte("\n")) {
		t.Fatal("the journal does not end with a newline after a clean shutdown")
	}
	// Half of a record, as a crash in the middle of a write leaves it.
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"update","data":{"sessionId":"` + sid + `","update":{"sessionUpd`)
	f.Close()

	p2, c2, replay := loadSession(ctx, t, script, state, sid, cwd)
	checkReplay(t, live, replay, "first turn")
	if _, err := p2.stderr.waitFor(ctx, "torn"); err != nil {
		t.Fatalf("no warning about the torn line: %v; stderr:\n%s", err, p2.stderr)
	}
	c2.endTurn(ctx, sid, "second turn")
	p2.hangUp(ctx)
	live2 := c2.updates(sid)

	// The append after the torn line started on a fresh line: a third
	// daemon loads both turns.
	p3, _, replay3 := loadSession(ctx, t, script, state, sid, cwd)
	checkReplay(t, live2, replay3, "second turn")
	p3.hangUp(ctx)
}

func TestClientDisconnectMidTurnOnASocket(t *testing.T) {
	ctx := testkit.Context(t)
	script := writeScript(t, hangScript)
	p, path := serveUnix(t, "--model", "scripted:"+script, "--log-level", "debug")
	cwd := t.TempDir()
	c := dialWire(t, "unix", path)
	sid, _ := hangingTurn(ctx, t, c, cwd)
	live := c.updates(sid)
	c.closer.Close()
	// The daemon logs the disconnect once the connection's turns ended and
	// its sessions closed.
	if _, err := p.stderr.waitFor(ctx, "client disconnected"); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}

	c2 := dialWire(t, "unix", path)
	c2.initialize(ctx, nil)
	c2.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil)
	checkReplay(t, live, c2.updates(sid), "hang")
	c2.endTurn(ctx, sid, "next")
	c2.closer.Close()
	p.stop(t)
}

// TestAnAnswerToAClosedStdoutEndsDshdCleanlyNotBySIGPIPE: an editor that
// closes dshd's stdout and then sends a request gets no answer, but dshd
// must go on to its own shutdown (journals closed, exit 0), not be killed
// by the SIGPIPE a write to a closed pipe on fd 1 raises in a Go program.
func TestAnAnswerToAClosedStdoutEndsDshdCleanlyNotBySIGPIPE(t *testing.T) {
	ctx := testkit.Context(t)
	p := start(t, opts{}, "--model", "scripted:"+writeScript(t, hangScript), "--state-dir", t.TempDir())
	p.stdout.Close()
	if _, err := io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	p.stdin.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr)
	}
}
