package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestStreamContent(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name          string
		reply         openaitest.Reply
		wantText      string
		wantReasoning *string
		wantKinds     string
	}{
		{
			name:      "text arrives in its fragments, then usage and finish",
			reply:     openaitest.Text("Hel", "lo", ", world"),
			wantText:  "Hello, world",
			wantKinds: "TTTUF",
		},
		{
			name:          "reasoning_content precedes the text",
			reply:         openaitest.Reply{Reasoning: []string{"", "Let me ", "think."}, Text: []string{"Done."}},
			wantText:      "Done.",
			wantReasoning: ptr("Let me think."),
			wantKinds:     "RRRTUF",
		},
		{
			name:          "the reasoning spelling is read too",
			reply:         openaitest.Reply{Reasoning: []string{"a", "b"}, ReasoningField: "reasoning", Text: []string{"c"}},
			wantText:      "c",
			wantReasoning: ptr("ab"),
			wantKinds:     "RRTUF",
		},
		{
			name:          "an empty reasoning still reports the field",
			reply:         openaitest.Reply{Reasoning: []string{""}, Text: []string{"hi"}},
			wantText:      "hi",
			wantReasoning: ptr(""),
			wantKinds:     "RTUF",
		},
		{
			name:      "CRLF line ends",
			reply:     openaitest.Reply{Text: []string{"a", "b"}, CRLF: true},
			wantText:  "ab",
			wantKinds: "TTUF",
		},
		{
			name:      "data: without a space",
			reply:     openaitest.Reply{Text: []string{"a", "b"}, NoSpace: true},
			wantText:  "ab",
			wantKinds: "TTUF",
		},
		{
			name:      "events split across writes",
			reply:     openaitest.Reply{Text: []string{"split", " me"}, SplitWrites: true},
			wantText:  "split me",
			wantKinds: "TTUF",
		},
		{
			name:      "multi-line data joined with newlines",
			reply:     openaitest.Reply{Text: []string{"multi", "line"}, MultiLine: true},
			wantText:  "multiline",
			wantKinds: "TTUF",
		},
		{
			name:      "event, id and retry fields are ignored",
			reply:     openaitest.Reply{Text: []string{"x"}, SSEFields: true},
			wantText:  "x",
			wantKinds: "TUF",
		},
		{
			name:      "keep-alive comments and blank lines before and between events",
			reply:     openaitest.Reply{Text: []string{"a", "b"}, KeepAlives: 3, Comment: ": OPENROUTER PROCESSING"},
			wantText:  "ab",
			wantKinds: "TTUF",
		},
		{
			name:      "a 1 MB data line",
			reply:     openaitest.Reply{Text: []string{big}},
			wantText:  big,
			wantKinds: "TUF",
		},
		{
			name:          "a non-streaming JSON body after blank keep-alive lines",
			reply:         openaitest.Reply{Reasoning: []string{"r"}, Text: []string{"json ", "body"}, JSON: true, KeepAlives: 3},
			wantText:      "json body",
			wantReasoning: ptr("r"),
			wantKinds:     "RTUF",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(tt.reply)
			evs, err := h.run(t.Context(), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(evs); got != tt.wantKinds {
				t.Errorf("event kinds = %s, want %s", got, tt.wantKinds)
			}
			msg, _, fr := collect(t, evs)
			if msg.Content != tt.wantText {
				t.Errorf("text = %.80q, want %.80q", msg.Content, tt.wantText)
			}
			if (msg.Reasoning == nil) != (tt.wantReasoning == nil) ||
				(msg.Reasoning != nil && *msg.Reasoning != *tt.wantReasoning) {
				t.Errorf("reasoning = %v, want %v", deref(msg.Reasoning), deref(tt.wantReasoning))
			}
			if fr != llm.FinishStop {
				t.Errorf("finish = %q, want stop", fr)
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return "&" + *p
}

func TestStreamRawFraming(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		wantText  string
		wantKinds string
		wantErr   string
	}{
		{
			name: "both reasoning spellings in one stream are never doubled",
			raw: `data: {"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"a"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"reasoning":"b","reasoning_content":"b"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			wantText:  "x",
			wantKinds: "RRTF",
		},
		{
			name: "nulls and unknown fields are tolerated",
			raw: `data: {"id":null,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":null,"weird":{"a":[1]}},"finish_reason":null,"logprobs":null}],"usage":null,"timings":{"x":1}}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"content":7}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":""}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			wantText:  "ok",
			wantKinds: "TF",
		},
		{
			name:      "a last event without its blank line still counts",
			raw:       `data: {"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]}` + "\n",
			wantText:  "end",
			wantKinds: "TF",
		},
		{
			name: "a second choice is ignored",
			raw: `data: {"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
			wantText:  "yes",
			wantKinds: "TF",
		},
		{
			name:    "a chunk that is not JSON fails the call",
			raw:     `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\ndata: {not json}\n\n",
			wantErr: "bad stream chunk",
		},
		{
			name:    "a line torn at the end of the body is a truncation",
			raw:     `data: {"choices":[{"index":0,"delta":{"content":"a"}}]`,
			wantErr: llm.ErrTruncated.Error(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(openaitest.Reply{Raw: tt.raw, SplitWrites: true})
			evs, err := h.run(t.Context(), userReq("hi"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(evs); got != tt.wantKinds {
				t.Errorf("event kinds = %s, want %s", got, tt.wantKinds)
			}
			msg, _, _ := collect(t, evs)
			if msg.Content != tt.wantText {
				t.Errorf("text = %q, want %q", msg.Content, tt.wantText)
			}
		})
	}
}

func TestStreamToolCalls(t *testing.T) {
	argsA := `{"path":"a\"b\\c\n","note":"héllo wörld 😀 ✓"}`
	argsB := `{"dir":"."}`
	tests := []struct {
		name  string
		reply openaitest.Reply
		want  []llm.ToolCall
	}{
		{
			name: "fragments split inside strings, escapes and multi-byte characters",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: argsA, Split: []int{1, 9, 11, 13, 14, 28, 29, 33, 34, 35, 36, 37}},
			}},
			want: []llm.ToolCall{{ID: "call_a", Name: "read_file", Arguments: argsA}},
		},
		{
			name: "a surrogate pair cut between its two escapes",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "call_e", Name: "emoji", Chunks: []string{`{\"e\":\"\ud83d`, `\ude00\"}`}},
			}},
			want: []llm.ToolCall{{ID: "call_e", Name: "emoji", Arguments: `{"e":"😀"}`}},
		},
		{
			name: "parallel calls in sequence",
			reply: openaitest.Reply{Text: []string{"Reading."}, ToolCalls: []openaitest.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: argsA, Split: []int{5, 20}},
				{ID: "call_b", Name: "list_dir", Arguments: argsB, Split: []int{3}},
			}},
			want: []llm.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: argsA},
				{ID: "call_b", Name: "list_dir", Arguments: argsB},
			},
		},
		{
			name: "parallel calls interleaved, names repeated in every fragment",
			reply: openaitest.Reply{ToolLayout: openaitest.Interleaved, ToolCalls: []openaitest.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: argsA, Split: []int{5, 20, 30}, RepeatName: true},
				{ID: "call_b", Name: "list_dir", Arguments: argsB, Split: []int{3, 6}, RepeatName: true},
			}},
			want: []llm.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: argsA},
				{ID: "call_b", Name: "list_dir", Arguments: argsB},
			},
		},
		{
			name: "Ollama: whole calls all at index 0 with distinct ids",
			reply: openaitest.Reply{ToolLayout: openaitest.Whole, ToolCalls: []openaitest.ToolCall{
				{ID: "a1b2", Name: "read_file", Arguments: argsA},
				{ID: "c3d4", Name: "read_file", Arguments: argsB},
			}},
			want: []llm.ToolCall{
				{ID: "a1b2", Name: "read_file", Arguments: argsA},
				{ID: "c3d4", Name: "read_file", Arguments: argsB},
			},
		},
		{
			name: "calls without id or index get synthesized ids",
			reply: openaitest.Reply{ToolLayout: openaitest.Whole, ToolCalls: []openaitest.ToolCall{
				{Name: "read_file", Arguments: argsB, NoIndex: true},
				{Name: "list_dir", Arguments: argsB, NoIndex: true},
			}},
			want: []llm.ToolCall{
				{ID: "call_0", Name: "read_file", Arguments: argsB},
				{ID: "call_1", Name: "list_dir", Arguments: argsB},
			},
		},
		{
			name: "integer ids are stringified and calls come out in index order",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "7", NumericID: true, Name: "second", Arguments: argsB, Index: ptr(1)},
				{ID: "3", NumericID: true, Name: "first", Arguments: argsB, Index: ptr(0)},
			}},
			want: []llm.ToolCall{
				{ID: "3", Name: "first", Arguments: argsB},
				{ID: "7", Name: "second", Arguments: argsB},
			},
		},
		{
			name: "tool calls ended with stop still count as tool calls",
			reply: openaitest.Reply{Finish: "stop", ToolCalls: []openaitest.ToolCall{
				{ID: "call_s", Name: "x", Arguments: argsB},
			}},
			want: []llm.ToolCall{{ID: "call_s", Name: "x", Arguments: argsB}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(tt.reply)
			evs, err := h.run(t.Context(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			msg, _, fr := collect(t, evs)
			if fr != llm.FinishToolCalls {
				t.Errorf("finish = %q, want tool_calls", fr)
			}
			if len(msg.ToolCalls) != len(tt.want) {
				t.Fatalf("tool calls = %+v, want %+v", msg.ToolCalls, tt.want)
			}
			for i := range tt.want {
				if msg.ToolCalls[i] != tt.want[i] {
					t.Errorf("call %d = %+v, want %+v", i, msg.ToolCalls[i], tt.want[i])
				}
			}
		})
	}
}

// Every cut position of an argument text with escapes and multi-byte
// characters must give the text back unchanged.
func TestToolArgumentsSplitAtEveryByte(t *testing.T) {
	args := `{"a":"x\"y\\z","u":"é😀"}`
	h := newHarness(t, nil)
	for cut := 1; cut < len(args); cut++ {
		h.srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c", Name: "f", Arguments: args, Split: []int{cut, cut + 1}},
		}})
		evs, err := h.run(t.Context(), userReq("go"))
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		msg, _, _ := collect(t, evs)
		if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Arguments != args {
			t.Fatalf("cut %d: calls = %+v", cut, msg.ToolCalls)
		}
	}
}

func TestStreamUsage(t *testing.T) {
	u := &openaitest.Usage{PromptTokens: 100, CompletionTokens: 20, CacheHit: 64, ReasoningTokens: 5}
	want := llm.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120, CachedInputTokens: 64, ReasoningTokens: 5}
	tests := []struct {
		name      string
		at        openaitest.UsagePlacement
		noOptions bool
		want      *llm.Usage
	}{
		{name: "a usage chunk with choices [] when include_usage is sent", at: openaitest.UsageChunk, want: &want},
		{name: "a usage chunk with choices null", at: openaitest.UsageChoicesNull, want: &want},
		{name: "usage on the finish chunk", at: openaitest.UsageOnFinish, want: &want},
		{name: "usage on every chunk keeps the last", at: openaitest.UsageEveryChunk, want: &want},
		{name: "no usage chunk without include_usage", at: openaitest.UsageChunk, noOptions: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				if tt.noOptions {
					c := DeepSeekCompat()
					c.SendStreamOptions = false
					o.Compat = &c
				}
			})
			h.srv.Enqueue(openaitest.Reply{Text: []string{"a", "b"}, Usage: u, UsageAt: tt.at})
			evs, err := h.run(t.Context(), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			var got []llm.Usage
			for _, ev := range evs {
				if ev.Kind == llm.EventUsage {
					got = append(got, *ev.Usage)
				}
			}
			switch {
			case tt.want == nil && len(got) != 0:
				t.Errorf("usage events = %+v, want none", got)
			case tt.want != nil && (len(got) != 1 || got[0] != *tt.want):
				t.Errorf("usage events = %+v, want one %+v", got, *tt.want)
			}
			if last := evs[len(evs)-1]; last.Kind != llm.EventFinish {
				t.Errorf("last event kind = %d, want finish", last.Kind)
			}
		})
	}
}

func TestStreamFinishReasons(t *testing.T) {
	tests := []struct {
		finish    string
		want      llm.FinishReason
		wantErrIs error
		retryable bool
	}{
		{finish: "stop", want: llm.FinishStop},
		{finish: "length", want: llm.FinishLength},
		{finish: "tool_calls", want: llm.FinishToolCalls},
		{finish: "content_filter", want: llm.FinishContentFilter},
		{finish: "insufficient_system_resource", retryable: true},
		{finish: "eos", wantErrIs: ErrUnknownFinishReason},
		{finish: "error", wantErrIs: ErrUnknownFinishReason},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(openaitest.Reply{Text: []string{"partial"}, Finish: tt.finish})
			evs, err := h.run(t.Context(), userReq("hi"))
			switch {
			case tt.wantErrIs != nil:
				if !errors.Is(err, tt.wantErrIs) || !strings.Contains(err.Error(), tt.finish) {
					t.Fatalf("err = %v, want %v naming %q", err, tt.wantErrIs, tt.finish)
				}
			case tt.retryable:
				e := apiError(t, err)
				if !e.Retryable() || e.Code != tt.finish {
					t.Fatalf("err = %v (retryable %v, code %q), want a retryable %s", e, e.Retryable(), e.Code, tt.finish)
				}
				if len(h.srv.ChatRequests()) != 1 {
					t.Errorf("the call was retried after deltas reached the consumer")
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if _, _, fr := collect(t, evs); fr != tt.want {
					t.Errorf("finish = %q, want %q", fr, tt.want)
				}
			}
		})
	}
}

func TestStreamLengthMidToolArguments(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Enqueue(openaitest.Reply{Finish: "length", ToolCalls: []openaitest.ToolCall{
		{ID: "c", Name: "write_file", Arguments: `{"path":"a.go","content":"pack`, Split: []int{10}},
	}})
	evs, err := h.run(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg, _, fr := collect(t, evs)
	if fr != llm.FinishLength {
		t.Errorf("finish = %q, want length", fr)
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Arguments != `{"path":"a.go","content":"pack` {
		t.Errorf("calls = %+v, want the cut call as sent", msg.ToolCalls)
	}
}

func TestStreamBreaks(t *testing.T) {
	tests := []struct {
		name     string
		reply    openaitest.Reply
		wantText string
		check    func(t *testing.T, err error)
	}{
		{
			name:     "a connection closed mid-stream is a truncation",
			reply:    openaitest.Reply{Text: []string{"one ", "two ", "three"}, Disconnect: true, DisconnectAfter: 3},
			wantText: "one two ",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, llm.ErrTruncated) {
					t.Errorf("err = %v, want ErrTruncated", err)
				}
			},
		},
		{
			name:     "a clean close without finish or [DONE] is a truncation",
			reply:    openaitest.Reply{Text: []string{"a", "b"}, NoFinish: true, NoDone: true},
			wantText: "ab",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, llm.ErrTruncated) {
					t.Errorf("err = %v, want ErrTruncated", err)
				}
			},
		},
		{
			name:     "[DONE] without a finish reason is a truncation",
			reply:    openaitest.Reply{Text: []string{"a"}, NoFinish: true},
			wantText: "a",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, llm.ErrTruncated) {
					t.Errorf("err = %v, want ErrTruncated", err)
				}
			},
		},
		{
			name: "an in-stream error event fails the call with its message",
			reply: openaitest.Reply{Text: []string{"a"}, ErrorEvent: true, Error: &openaitest.Error{
				Message: "upstream exploded", Type: "server_error", Code: "server_error"}},
			wantText: "a",
			check: func(t *testing.T, err error) {
				e := apiError(t, err)
				if e.Message != "upstream exploded" || e.Code != "server_error" {
					t.Errorf("err = %+v", e)
				}
			},
		},
		{
			name: "an in-stream error with a numeric code (OpenRouter)",
			reply: openaitest.Reply{ErrorEvent: true, Error: &openaitest.Error{
				Message: "Provider returned error", Code: 502}},
			check: func(t *testing.T, err error) {
				e := apiError(t, err)
				if e.Code != "502" || !e.Retryable() {
					t.Errorf("err = %+v, retryable %v; want code 502, retryable", e, e.Retryable())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(tt.reply)
			evs, err := h.run(t.Context(), userReq("hi"))
			if err == nil {
				t.Fatal("the call succeeded")
			}
			tt.check(t, err)
			var text string
			for _, ev := range evs {
				text += ev.Text
			}
			if text != tt.wantText {
				t.Errorf("text before the failure = %q, want %q", text, tt.wantText)
			}
			if n := len(h.srv.ChatRequests()); n != 1 {
				t.Errorf("requests = %d, want 1: a broken stream is never retried", n)
			}
		})
	}
}
