// End-to-end tests of `dshd prompt` against the fake OpenAI-compatible
// server: output streams, --json, and exit codes.

package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// promptArgs is `dshd prompt` against srv with no key.
func promptArgs(t testing.TB, srv *openaitest.Server, extra ...string) []string {
	args := []string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--cwd", t.TempDir()}
	return append(args, extra...)
}

// quickRetry makes a failure retried at once.
var quickRetry = http.Header{"Retry-After-Ms": {"1"}}

// promptWithKey runs `dshd prompt hi` with the key sent in E2E_MODEL_KEY
// against a fake server that accepts only serverKey and would answer reply.
func promptWithKey(t *testing.T, serverKey, sentKey, reply string) (code int, stdout, stderr string) {
	t.Helper()
	srv := fakeModel(t)
	srv.RequireAPIKey(serverKey)
	srv.Enqueue(openaitest.Text(reply))
	args := promptArgs(t, srv, "--api-key-env", "E2E_MODEL_KEY", "hi")
	return runDshd(t, []string{"E2E_MODEL_KEY=" + sentKey}, args...)
}

func TestPromptPrintsTheAnswerOnStdoutAndToolActivityOnStderr(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(
		openaitest.Reply{Reasoning: []string{"Let me look."}, ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		openaitest.Reply{Reasoning: []string{"Seen it."}, Text: []string{"The directory ", "is empty."}},
	)
	code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, "what is here?")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if stdout != "The directory is empty.\n" {
		t.Fatalf("stdout %q, want only the answer", stdout)
	}
	if !strings.Contains(stderr, "→") || !strings.Contains(stderr, "✓") {
		t.Fatalf("stderr lacks the tool activity:\n%s", stderr)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 || reqs[0].Model != "m" {
		t.Fatalf("%d chat requests (model %q), want 2 for model m", len(reqs), reqs[0].Model)
	}
	if last := reqs[0].LastUserText(); last != "what is here?" {
		t.Fatalf("the model got %q as the prompt", last)
	}
}

func TestPromptJSONWritesAJSONLStreamOfEvents(t *testing.T) {
	srv := fakeModel(t)
	srv.Enqueue(openaitest.Text("Hello", ", world"))
	code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, "--json", "hi")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q is not a JSON object: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) < 2 {
		t.Fatalf("%d JSONL lines:\n%s", len(lines), stdout)
	}
	if got := string(lines[len(lines)-1]["stopReason"]); got != `"end_turn"` {
		t.Fatalf("last line %s, want the stop reason", stdout[strings.LastIndex(strings.TrimSpace(stdout), "\n")+1:])
	}
	var answer strings.Builder
	for _, l := range lines[:len(lines)-1] {
		var u struct {
			Kind    string `json:"sessionUpdate"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if l["sessionId"] == nil || json.Unmarshal(l["update"], &u) != nil || u.Kind == "" {
			t.Fatalf("event line without sessionId/update: %v", l)
		}
		if u.Kind == "agent_message_chunk" {
			answer.WriteString(u.Content.Text)
		}
	}
	if answer.String() != "Hello, world" {
		t.Fatalf("answer in the events %q", answer.String())
	}
}

func TestPromptExitCodes(t *testing.T) {
	t.Run("1 when the model server keeps failing with 500", func(t *testing.T) {
		srv := fakeModel(t)
		srv.Handle(func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Status: 500, Header: quickRetry}
		})
		code, stdout, stderr := runDshd(t, nil, promptArgs(t, srv, "hi")...)
		if code != 1 {
			t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
		}
		if stdout != "" || !strings.Contains(stderr, "500") {
			t.Fatalf("stdout %q; stderr without the status:\n%s", stdout, stderr)
		}
	})

	t.Run("1 with --json too, and the error as the last event", func(t *testing.T) {
		srv := fakeModel(t)
		srv.Handle(func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Status: 500, Header: quickRetry}
		})
		code, stdout, _ := runDshd(t, nil, promptArgs(t, srv, "--json", "hi")...)
		if code != 1 || !strings.Contains(stdout, `"error"`) {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
	})

	t.Run("1 on a wrong API key (401)", func(t *testing.T) {
		code, _, stderr := promptWithKey(t, "right-key", "wrong-key", "never sent")
		if code != 1 || !strings.Contains(stderr, "401") {
			t.Fatalf("exit %d, want 1 naming the 401; stderr:\n%s", code, stderr)
		}
		if strings.Contains(stderr, "wrong-key") {
			t.Fatalf("the key leaked into stderr:\n%s", stderr)
		}
	})

	t.Run("0 with the right API key from the named variable", func(t *testing.T) {
		code, stdout, stderr := promptWithKey(t, "right-key", "right-key", "welcome")
		if code != 0 || stdout != "welcome\n" {
			t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
		}
	})

	t.Run("130 on SIGINT while the reply is held; the turn is cancelled", func(t *testing.T) {
		srv := fakeModel(t)
		hold := make(chan struct{})
		t.Cleanup(func() { close(hold) }) // runs before srv.Close
		arrived := make(chan struct{})
		var once sync.Once
		srv.Handle(func(*openaitest.Request) openaitest.Reply {
			once.Do(func() { close(arrived) })
			return openaitest.Reply{Hold: hold, Text: []string{"too late"}}
		})
		p := start(t, opts{stdin: strings.NewReader("")}, promptArgs(t, srv, "wait for it")...)
		ctx := testkit.Context(t)
		select {
		case <-arrived:
		case <-ctx.Done():
			t.Fatalf("the model was never called; stderr:\n%s", p.stderr)
		case <-p.done:
			t.Fatalf("dshd exited early: %v; stderr:\n%s", p.err, p.stderr)
		}
		p.signal(syscall.SIGINT)
		if code := p.wait(ctx); code != 130 {
			t.Fatalf("exit %d, want 130; stderr:\n%s", code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "cancelled") {
			t.Fatalf("stderr does not say the turn was cancelled:\n%s", p.stderr)
		}
	})
}
