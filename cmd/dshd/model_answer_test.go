// End-to-end tests of --max-model-answer-bytes: a model server that
// streams an answer without end costs a bounded amount of memory, ends
// the turn with an error naming the setting, and leaves the daemon
// serving.

package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// answerBound is the --max-model-answer-bytes of these tests.
const answerBound = 1 << 20

// endless is a fake model whose first n answers stream text without end,
// counting what it wrote in sent; later ones answer "fine".
func endless(n int64, sent *atomic.Int64) func(*openaitest.Request) openaitest.Reply {
	var calls atomic.Int64
	return func(*openaitest.Request) openaitest.Reply {
		if calls.Add(1) > n {
			return openaitest.Text("fine")
		}
		return openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodText, Sent: sent}}
	}
}

// An endless answer fails the turn with an error naming the setting and
// its value, twice; the daemon logs the bound once, stays up and answers
// the next prompt. The server, which never stops, had written little
// more than the bound when each turn ended: the daemon stopped reading.
func TestAnEndlessModelAnswerEndsTheTurnNamingTheSettingAndTheDaemonGoesOn(t *testing.T) {
	ctx := testkit.Context(t)
	sent := new(atomic.Int64)
	srv, p, c := modelDaemon(t, endless(2, sent), "--max-model-answer-bytes", strconv.Itoa(answerBound))
	sid := c.openSession(ctx, t.TempDir())

	for turn := range 2 {
		before := sent.Load()
		e := c.callFail(ctx, "session/prompt", promptParams(sid, "write forever"))
		wrote := sent.Load() - before
		if !strings.HasPrefix(e.Message, "The turn failed: ") || !strings.Contains(e.Message, "--max-model-answer-bytes sets it") ||
			!strings.Contains(e.Message, strconv.Itoa(answerBound)) {
			t.Fatalf("turn %d: error %v, want the turn failed naming --max-model-answer-bytes and %d", turn+1, e, answerBound)
		}
		// Socket buffers between the two hold a few MiB; an unbounded
		// daemon would read on as long as the server writes: forever.
		if wrote > 64<<20 {
			t.Fatalf("turn %d: the server had written %d bytes when the turn ended", turn+1, wrote)
		}
	}
	shown := 0
	for _, n := range c.updates(sid) {
		var u struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if n.Kind == "agent_message_chunk" && json.Unmarshal(n.Update, &u) == nil {
			shown += len(u.Content.Text)
		}
	}
	if shown > 2*answerBound {
		t.Fatalf("the editor was shown %d bytes of two answers bound to %d each", shown, answerBound)
	}

	c.endTurn(ctx, sid, "now answer")
	if n := len(srv.ChatRequests()); n != 3 {
		t.Fatalf("%d model requests, want 3: an answer over the bound is not retried", n)
	}
	if got := linesWith(p.stderr, "answer passed its bound", "setting=--max-model-answer-bytes", "limit="+strconv.Itoa(answerBound)); len(got) != 1 {
		t.Fatalf("the bound was logged %d times over two turns, want once:\n%s", len(got), p.stderr.String())
	}
}

// `dshd prompt` fails the same way, exit 1, with the setting taken from
// the environment.
func TestAnEndlessModelAnswerFailsDshdPromptNamingTheSetting(t *testing.T) {
	srv := fakeModel(t)
	srv.Handle(endless(1, new(atomic.Int64)))
	code, _, stderr := runDshd(t, []string{"DSHD_MAX_MODEL_ANSWER_BYTES=" + strconv.Itoa(answerBound)}, promptArgs(t, srv, "write forever")...)
	want := "passed " + strconv.Itoa(answerBound) + " bytes (--max-model-answer-bytes sets it)"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want 1 saying %q; stderr:\n%s", code, want, stderr)
	}
}

func TestABadModelAnswerBoundStopsDshdAtStart(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "a bound under 64 KiB", args: []string{"--max-model-answer-bytes", "4096"}, want: []string{"--max-model-answer-bytes", `"4096"`, "want 65536 to 1073741824"}},
		{name: "a bound over 1 GiB", args: []string{"--max-model-answer-bytes", "2147483648"}, want: []string{"--max-model-answer-bytes", `"2147483648"`, "want 65536 to 1073741824"}},
		{name: "a bound that is no number", args: []string{"--max-model-answer-bytes", "32MiB"}, want: []string{"--max-model-answer-bytes", `"32MiB"`}},
		{name: "a bound from the environment that is no number", env: []string{"DSHD_MAX_MODEL_ANSWER_BYTES=lots"}, want: []string{"DSHD_MAX_MODEL_ANSWER_BYTES", `"lots"`}},
		{name: "a bound in the file", file: `{"maxModelAnswerBytes": -1}`, want: []string{"FILE:1:", "maxModelAnswerBytes", "-1", "want 65536 to 1073741824"}},
	})
}
