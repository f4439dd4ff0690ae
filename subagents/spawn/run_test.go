package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

func TestWait_AChildLevelFailureIsAResultWithStopErrorNeverAnError(t *testing.T) {
	secret := "sk-live-abcdefghijklmnopqrstuvwxyz0123456789"
	cases := []struct {
		name     string
		reply    st.Reply
		wantDiag string
		never    []string
	}{
		{"a model backend failure names the HTTP status, never a credential",
			st.Reply{Text: "partial words", Err: llm.NewAPIError(401, "invalid_api_key", "Incorrect API key provided: "+secret, `{"error":"`+secret+`"}`, false, nil)},
			"the model backend failed: HTTP 401", []string{secret, "sk-live"}},
		{"a stream that ends early is a backend failure",
			st.Reply{Text: "partial words", Err: llm.ErrTruncated}, "the model backend failed", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply { return tc.reply })})
			res, err := start(t, p, subagents.StartRequest{Prompt: "x"}).Wait(t.Context())
			if err != nil {
				t.Fatalf("Wait returned an error for a child-level failure: %v", err)
			}
			if res.StopReason != subagents.StopError || !strings.HasPrefix(res.Diagnostic, tc.wantDiag) {
				t.Fatalf("result = %+v", res)
			}
			for _, s := range tc.never {
				if strings.Contains(res.Diagnostic, s) {
					t.Fatalf("diagnostic %q repeats %q", res.Diagnostic, s)
				}
			}
			if res.Output != "partial words" || strings.Contains(res.Output, res.Diagnostic) {
				t.Fatalf("output = %q; it must be the partial answer, apart from the diagnostic", res.Output)
			}
		})
	}
}

func TestWait_AChildWhoseToolPanicsEndsWithStopError(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		return st.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "bomb", Arguments: `{"file":"secret contents"}`}}}
	})})
	st.Register(t, p.Tools, &st.Tool{ToolName: "bomb", Fn: func(context.Context, *tools.Call) (*tools.Result, error) {
		panic("read /etc/shadow: root:$6$hash")
	}})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	if res.StopReason != subagents.StopError || res.Diagnostic != "the tool bomb crashed" {
		t.Fatalf("result = %+v", res)
	}
}

func TestWait_AModelThatPanicsEndsWithStopError(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Panic: "backend bug"} })})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	if res.StopReason != subagents.StopError || res.Diagnostic != "the child crashed" {
		t.Fatalf("result = %+v", res)
	}
}

func TestWait_StopReasonsMapFromTheAgents(t *testing.T) {
	loop := st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}}
	})
	cases := []struct {
		name     string
		model    st.Model
		want     subagents.StopReason
		wantDiag string
	}{
		{"end_turn is completed", st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Text: "a"} }), subagents.StopCompleted, ""},
		{"max_tokens is max-tokens", st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Text: "a", Finish: llm.FinishLength} }), subagents.StopMaxTokens, ""},
		{"refusal is refusal", st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Finish: llm.FinishContentFilter} }), subagents.StopRefusal, ""},
		{"max_turn_requests is an error with a diagnostic", loop, subagents.StopError, "limit of model requests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := st.NewParent(t, st.ParentOptions{Model: tc.model})
			p.Service.RegisterProvider(newSpawn(3))
			st.Register(t, p.Tools, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { return &tools.Result{Output: "ok"}, nil }})
			res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
			if res.StopReason != tc.want || !strings.Contains(res.Diagnostic, tc.wantDiag) || (tc.wantDiag == "" && res.Diagnostic != "") {
				t.Fatalf("result = %+v, want %s", res, tc.want)
			}
		})
	}
}

func TestCancel_ARunCancelledByItsOwnerEndsAborted(t *testing.T) {
	called := make(chan struct{}, 1)
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		called <- struct{}{}
		return st.Reply{Block: make(chan struct{}), Text: "never"}
	})})
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	result := collect(t, run)
	st.Recv(t, called)
	run.Cancel()
	res := st.Recv(t, result)
	if res.StopReason != subagents.StopAborted || res.Diagnostic != "" {
		t.Fatalf("result = %+v", res)
	}
}

func TestCancel_StartContextDoesNotOwnTheRun(t *testing.T) {
	release := make(chan struct{})
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Block: release, Text: "done"} })})
	ctx, cancel := context.WithCancel(t.Context())
	run, err := p.Service.Start(ctx, "spawn", subagents.StartRequest{Prompt: "x", Parent: p.Scope})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Dispose()
	cancel()
	close(release)
	if res := wait(t, run); res.StopReason != subagents.StopCompleted {
		t.Fatalf("cancelling Start's context ended the run: %+v", res)
	}
}

func TestDispose_IsIdempotentCancelsWhatRemainsAndClosesTheChild(t *testing.T) {
	called := make(chan struct{}, 1)
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		called <- struct{}{}
		return st.Reply{Block: make(chan struct{})}
	})})
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	result := collect(t, run)
	st.Recv(t, called)
	if err := run.Dispose(); err != nil {
		t.Fatal(err)
	}
	if err := run.Dispose(); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Registry.Get(run.ID()); ok {
		t.Fatal("child still registered")
	}
	if res := st.Recv(t, result); res.StopReason != subagents.StopAborted {
		t.Fatalf("a disposed running child ended %s", res.StopReason)
	}
}

func TestOutput_IsTheLastAssistantMessageWithContentElseTheStreamedText(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{Text: "let me look", ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}}
		}
		return st.Reply{Reasoning: "thinking only"}
	})})
	st.Register(t, p.Tools, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { return &tools.Result{Output: "ok"}, nil }})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	if res.Output != "let me look" || res.LastMessage == nil || res.LastMessage.Content != "let me look" {
		t.Fatalf("output = %q, last = %+v", res.Output, res.LastMessage)
	}
	q := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply { return st.Reply{Reasoning: "hm"} })})
	if res := wait(t, start(t, q, subagents.StartRequest{Prompt: "x"})); res.Output != "" || res.LastMessage != nil {
		t.Fatalf("a silent child's output = %q", res.Output)
	}
}

func TestUsage_IsAccumulatedOverTheChildsModelCalls(t *testing.T) {
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		u := &llm.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{Usage: u, ToolCalls: []llm.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}}
		}
		return st.Reply{Usage: u, Text: "done"}
	})})
	st.Register(t, p.Tools, &st.Tool{ToolName: "noop", Fn: func(context.Context, *tools.Call) (*tools.Result, error) { return &tools.Result{Output: "ok"}, nil }})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "x"}))
	if res.Usage.InputTokens != 200 || res.Usage.OutputTokens != 20 || res.Usage.TotalTokens != 220 {
		t.Fatalf("usage = %+v", res.Usage)
	}
}

func TestOutputSchema_TheFinalAnswerMustBeValidJSONAgainstTheSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)
	cases := []struct {
		name, answer   string
		want           subagents.StopReason
		wantStructured string
		wantDiag       string
	}{
		{"a valid answer is structured", `{"count": 3}`, subagents.StopCompleted, `{"count": 3}`, ""},
		{"a fenced valid answer is structured", "```json\n{\"count\": 4}\n```", subagents.StopCompleted, `{"count": 4}`, ""},
		{"an answer of the wrong type is an error", `{"count": "three"}`, subagents.StopError, "", "does not match the output schema"},
		{"an answer missing a required property is an error", `{}`, subagents.StopError, "", "count"},
		{"prose is an error", `three`, subagents.StopError, "", "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &st.Requests{}
			p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
				rec.Add(req)
				return st.Reply{Text: tc.answer}
			})})
			res := wait(t, start(t, p, subagents.StartRequest{Prompt: "count", OutputSchema: schema}))
			if res.StopReason != tc.want || string(res.Structured) != tc.wantStructured || !strings.Contains(res.Diagnostic, tc.wantDiag) {
				t.Fatalf("result = %+v", res)
			}
			if res.Output != tc.answer {
				t.Fatalf("output = %q", res.Output)
			}
			if u := st.LastUser(rec.All()[0]); !strings.Contains(u, `"required":["count"]`) {
				t.Fatalf("the child was not told the schema: %q", u)
			}
		})
	}
	t.Run("an invalid answer gets one corrective turn that says why", func(t *testing.T) {
		rec := &st.Requests{}
		p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
			rec.Add(req)
			if strings.Contains(st.LastUser(req), "does not match the required JSON Schema") && strings.Contains(st.LastUser(req), "count") {
				return st.Reply{Text: `{"count": 3}`}
			}
			return st.Reply{Text: `{"count": "three"}`}
		})})
		res := wait(t, start(t, p, subagents.StartRequest{Prompt: "count", OutputSchema: schema}))
		if res.StopReason != subagents.StopCompleted || string(res.Structured) != `{"count": 3}` || len(rec.All()) != 2 {
			t.Fatalf("result = %+v after %d model calls", res, len(rec.All()))
		}
	})
	t.Run("an answer invalid after the correction fails and says so", func(t *testing.T) {
		rec := &st.Requests{}
		p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
			rec.Add(req)
			return st.Reply{Text: `{"count": "three"}`}
		})})
		res := wait(t, start(t, p, subagents.StartRequest{Prompt: "count", OutputSchema: schema}))
		if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "also after it was told why") || len(rec.All()) != 2 {
			t.Fatalf("result = %+v after %d model calls", res, len(rec.All()))
		}
	})
	t.Run("an invalid schema fails Start before any child exists", func(t *testing.T) {
		p := setup(t, st.ParentOptions{})
		_, err := p.Service.Start(t.Context(), "spawn", subagents.StartRequest{Prompt: "x", Parent: p.Scope, OutputSchema: json.RawMessage(`{"type":`)})
		if !errors.Is(err, subagents.ErrInvalidRequest) || p.Registry.Len() != 1 {
			t.Fatalf("err = %v, live agents = %d", err, p.Registry.Len())
		}
	})
}
