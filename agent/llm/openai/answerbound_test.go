package openai

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// answerBound is the bound the tests of MaxAnswerBytes set, and
// floodEnd how much a flooding server writes before it would finish: far
// more than the client may take, and more than the kernel's socket
// buffers between them hold.
const (
	answerBound = 1 << 20
	floodEnd    = 256 << 20
)

// boundedHarness is a client bound to answerBound bytes an answer, its
// log kept in logs.
func boundedHarness(t *testing.T, logs *testkit.SyncBuffer) *harness {
	return newHarness(t, func(o *Options) {
		o.MaxAnswerBytes = answerBound
		o.Settings.MaxAnswerBytes = "--max-model-answer-bytes"
		if logs != nil {
			o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		}
	})
}

// A server that streams an answer without end — or one that would end,
// but far past the bound — fails the call once the answer passes the
// bound: the error names the setting and its value, the call is not
// retried, the consumer was given no more than the bound, and the server
// got nowhere near its end before the client stopped reading.
func TestAnAnswerOverTheBoundFailsTheCallNamingTheSetting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
	}{
		{"text deltas", openaitest.Reply{Text: []string{"It begins."}, Flood: &openaitest.Flood{Of: openaitest.FloodText}}},
		{"reasoning deltas", openaitest.Reply{Reasoning: []string{"Hmm."}, Flood: &openaitest.Flood{Of: openaitest.FloodReasoning}}},
		{"reasoning deltas spelled reasoning", openaitest.Reply{ReasoningField: "reasoning", Flood: &openaitest.Flood{Of: openaitest.FloodReasoning}}},
		{"one tool call's arguments", openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodArguments}}},
		{"tool calls without end", openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodCalls}}},
		{"one event of data lines without its blank line", openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodEventLines}}},
		{"one line without its end", openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodLine}}},
		{"a non-streamed body", openaitest.Reply{JSON: true, Flood: &openaitest.Flood{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := boundedHarness(t, nil)
			sent := new(atomic.Int64)
			rep := tc.reply
			f := *rep.Flood
			f.FinishAfter, f.Sent = floodEnd, sent
			rep.Flood = &f
			h.srv.Enqueue(rep)

			evs, err := h.run(t.Context(), userReq("hi"))
			at := sent.Load()
			if err == nil {
				t.Fatalf("the call succeeded after the server wrote %d bytes", at)
			}
			if !errors.Is(err, ErrAnswerTooLong) {
				t.Fatalf("err = %v, want ErrAnswerTooLong", err)
			}
			for _, w := range []string{"--max-model-answer-bytes", strconv.Itoa(answerBound)} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to name %s", err, w)
				}
			}
			if at >= floodEnd/4 {
				t.Errorf("the server had written %d bytes when the call returned: the client read on", at)
			}
			held := 0
			for _, ev := range evs {
				held += len(ev.Text)
			}
			if held > answerBound {
				t.Errorf("the consumer was given %d bytes of answer, over the bound %d", held, answerBound)
			}
			if n := len(h.srv.ChatRequests()); n != 1 {
				t.Errorf("%d requests, want 1: an answer over the bound is not retried", n)
			}
		})
	}
}

// The bound is on the answer, not a little under it: an answer of
// exactly the bound's bytes arrives whole, one more byte fails.
func TestAnAnswerOfExactlyTheBoundArrives(t *testing.T) {
	half := strings.Repeat("y", answerBound/2)
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
		fails bool
	}{
		{"text and reasoning of the bound", openaitest.Reply{Reasoning: []string{half}, Text: []string{half}}, false},
		{"one byte more", openaitest.Reply{Reasoning: []string{half}, Text: []string{half, "!"}}, true},
		{"tool-call arguments of the bound", openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c", Name: "f", Arguments: half + half[:answerBound/2-len("cf")-callCost]}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := boundedHarness(t, nil)
			h.srv.Enqueue(tc.reply)
			_, err := h.run(t.Context(), userReq("hi"))
			if tc.fails != (err != nil) || (err != nil && !errors.Is(err, ErrAnswerTooLong)) {
				t.Fatalf("err = %v, want failure %v", err, tc.fails)
			}
		})
	}
}

// Hitting the bound is logged once per client, however often it
// happens, naming the setting; every call still fails with the error.
func TestAnAnswerOverTheBoundIsLoggedOnce(t *testing.T) {
	var logs testkit.SyncBuffer
	h := boundedHarness(t, &logs)
	for range 2 {
		h.srv.Enqueue(openaitest.Reply{Flood: &openaitest.Flood{Of: openaitest.FloodText}})
		if _, err := h.run(t.Context(), userReq("hi")); !errors.Is(err, ErrAnswerTooLong) {
			t.Fatalf("err = %v, want ErrAnswerTooLong", err)
		}
	}
	if n := strings.Count(logs.String(), "setting=--max-model-answer-bytes"); n != 1 {
		t.Fatalf("the bound was logged %d times over two calls, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "limit="+strconv.Itoa(answerBound)) {
		t.Fatalf("the log line is not a warning naming the limit:\n%s", logs.String())
	}
	// What a call holds is given back: a normal answer follows.
	h.srv.Enqueue(openaitest.Text("fine"))
	evs, err := h.run(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if msg, _, _ := collect(t, evs); msg.Content != "fine" {
		t.Fatalf("text = %q", msg.Content)
	}
}

// A huge answer cut by the old line bound was a bad body ("unexpected
// end of JSON input"); a non-streamed body over the bound is never taken
// for a whole one, and one within it is.
func TestANonStreamedBodyWithinTheBoundArrivesWhole(t *testing.T) {
	h := boundedHarness(t, nil)
	text := strings.Repeat("z", answerBound-4096)
	h.srv.Enqueue(openaitest.Reply{JSON: true, Text: []string{text}})
	evs, err := h.run(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if msg, _, fr := collect(t, evs); msg.Content != text || fr != llm.FinishStop {
		t.Fatalf("got %d bytes, finish %q; want the whole %d", len(msg.Content), fr, len(text))
	}
}

// The list of models is an answer of the model server's too: a list over
// twice the bound fails naming the setting instead of being cut (a list
// cut at the old fixed 32 MiB failed as "unexpected end of JSON input");
// one within it is read whole.
func TestAModelListOverTheBoundFailsNamingTheSetting(t *testing.T) {
	h := boundedHarness(t, nil)
	ids := make([]string, 2*answerBound/40)
	for i := range ids {
		ids[i] = "model-" + strconv.Itoa(i)
	}
	h.srv.SetModels(ids...)
	_, err := h.c.Models(t.Context())
	if err == nil || !strings.Contains(err.Error(), "GET /models") || !strings.Contains(err.Error(), "--max-model-answer-bytes sets it") {
		t.Fatalf("a list of %d models: err = %v, want one naming the list and --max-model-answer-bytes", len(ids), err)
	}
	h.srv.SetModels(ids[:1000]...)
	infos, err := h.c.Models(t.Context())
	if err != nil || len(infos) != 1000 || infos[999].ID != ids[999] {
		t.Fatalf("a list of 1000 models: %d read, err %v", len(infos), err)
	}
}
