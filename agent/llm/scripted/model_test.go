package scripted

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func collect(t *testing.T, m llm.Model, req *llm.Request) (llm.Message, llm.Usage, llm.FinishReason) {
	t.Helper()
	msg, u, fr, err := llm.Collect(m.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	return msg, u, fr
}

func mustParse(t *testing.T, js string) *Model {
	t.Helper()
	m, err := Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// conv builds a conversation: the system prompt, then messages given as
// "u:text", "a:text", "a:" (a tool-call turn) and "t:result".
func conv(system string, msgs ...string) *llm.Request {
	req := &llm.Request{}
	if system != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: system})
	}
	for _, s := range msgs {
		role, text, _ := strings.Cut(s, ":")
		switch role {
		case "u":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		case "a":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: text})
		case "t":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: "x"})
		}
	}
	return req
}

func TestMatching(t *testing.T) {
	m := mustParse(t, `{"rules": [
		{"system": "(?i)reviewer", "text": "review mode"},
		{"user": "^read", "step": 0, "toolCalls": [{"name": "read_file", "arguments": {"path": "a.go"}}]},
		{"user": "^read", "step": 1, "tool": "^package", "text": "it is Go"},
		{"user": "^read", "step": 1, "text": "not Go"},
		{"user": "^read", "text": "read, step {{step}}"},
		{"user": "hello", "text": "hi"}
	]}`)
	tests := []struct {
		name     string
		req      *llm.Request
		want     string
		wantCall string
		finish   llm.FinishReason
	}{
		{name: "the system condition wins first", req: conv("You are a reviewer.", "u:read a.go"), want: "review mode", finish: llm.FinishStop},
		{name: "step 0 makes a tool call", req: conv("sys", "u:read a.go"), wantCall: "read_file", finish: llm.FinishToolCalls},
		{name: "step 1 with a matching tool result", req: conv("sys", "u:read a.go", "a:", "t:package main"), want: "it is Go", finish: llm.FinishStop},
		{name: "step 1 with another tool result", req: conv("sys", "u:read a.go", "a:", "t:#!/bin/sh"), want: "not Go", finish: llm.FinishStop},
		{name: "a later step falls through to the step-less rule", req: conv("sys", "u:read a.go", "a:", "t:x", "a:", "t:y"), want: "read, step 2", finish: llm.FinishStop},
		{name: "only the last user message counts", req: conv("sys", "u:read a.go", "a:", "t:package main", "a:done", "u:hello there"), want: "hi", finish: llm.FinishStop},
		{name: "tool results of earlier turns do not count", req: conv("sys", "u:read a.go", "a:", "t:package main", "a:done", "u:read b.go", "a:"), want: "not Go", finish: llm.FinishStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, _, fr := collect(t, m, tt.req)
			if msg.Content != tt.want || fr != tt.finish {
				t.Errorf("got %q / %s, want %q / %s", msg.Content, fr, tt.want, tt.finish)
			}
			if tt.wantCall != "" && (len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Name != tt.wantCall) {
				t.Errorf("calls = %+v", msg.ToolCalls)
			}
		})
	}
}

func TestNoRuleNamesTheUserText(t *testing.T) {
	m := mustParse(t, `[{"user": "^only this$", "text": "x"}]`)
	_, err := llmtest.Drain(t, m.Stream(t.Context(), conv("", "u:something else")))
	if !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), `"something else"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSubstitutions(t *testing.T) {
	m := mustParse(t, `[
		{"step": 0, "reasoning": "user={{user}}", "text": "step {{step}}: {{user}}",
		 "toolCalls": [
			{"name": "f", "arguments": {"z": "{{user}}", "a": ["{{step}}", 1, {"t": "<{{tool}}>"}], "n": null}},
			{"name": "g", "arguments": "not json {{user}"},
			{"name": "h", "id": "fixed"}
		 ]},
		{"step": 1, "text": "tool said {{tool}}"}
	]`)
	user := `say "hi" & {{tool}}`
	msg, _, _ := collect(t, m, conv("", "u:"+user))
	if want := "step 0: " + user; msg.Content != want {
		t.Errorf("text = %q, want %q (no re-scan of substituted text)", msg.Content, want)
	}
	if msg.Reasoning == nil || *msg.Reasoning != "user="+user {
		t.Errorf("reasoning = %v", msg.Reasoning)
	}
	want := []llm.ToolCall{
		{ID: "call_1_0_0", Name: "f", Arguments: `{"z":"say \"hi\" & {{tool}}","a":["0",1,{"t":"<>"}],"n":null}`},
		{ID: "call_1_0_1", Name: "g", Arguments: "not json {{user}"},
		{ID: "fixed", Name: "h", Arguments: "{}"},
	}
	if !reflect.DeepEqual(msg.ToolCalls, want) {
		t.Errorf("calls:\n got %+v\nwant %+v", msg.ToolCalls, want)
	}
	msg, _, _ = collect(t, m, conv("", "u:x", "a:", "t:42 lines"))
	if msg.Content != "tool said 42 lines" {
		t.Errorf("text = %q", msg.Content)
	}
}

func TestStreaming(t *testing.T) {
	m := mustParse(t, `[
		{"user": "chunks", "reasoning": "", "text": "héllo wörld!", "chunk": 4},
		{"user": "usage", "text": "x", "usage": {"input": 10, "output": 3}, "finish": "length"},
		{"user": "counted", "text": "12345678"}
	]`)
	evs, err := llmtest.Drain(t, m.Stream(t.Context(), conv("", "u:chunks")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventReasoning:
			got = append(got, "R"+ev.Text)
		case llm.EventText:
			got = append(got, "T"+ev.Text)
		case llm.EventUsage:
			got = append(got, "U")
		case llm.EventFinish:
			got = append(got, "F"+string(ev.Finish))
		}
	}
	if want := []string{"R", "Théll", "To wö", "Trld!", "U", "Fstop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}

	evs, _ = llmtest.Drain(t, m.Instant().Stream(t.Context(), conv("", "u:chunks")))
	if len(evs) != 4 || evs[1].Text != "héllo wörld!" {
		t.Errorf("instant events = %+v, want one piece", evs)
	}

	_, u, fr := collect(t, m, conv("", "u:usage"))
	if u != (llm.Usage{InputTokens: 10, OutputTokens: 3, TotalTokens: 13}) || fr != llm.FinishLength {
		t.Errorf("usage %+v finish %s", u, fr)
	}
	_, u, _ = collect(t, m, conv("", "u:counted"))
	if u.OutputTokens != 2 || u.InputTokens != 2 || u.TotalTokens != 4 {
		t.Errorf("counted usage = %+v, want runes/4", u)
	}
}

func TestErrorRule(t *testing.T) {
	m := mustParse(t, `[{"text": "partial", "error": "boom for {{user}}", "errorStatus": 503, "retryable": true}]`)
	evs, err := llmtest.Drain(t, m.Stream(t.Context(), conv("", "u:x")))
	var e *llm.APIError
	if !errors.As(err, &e) || e.Status != 503 || !e.Retryable() || e.Message != "boom for x" {
		t.Fatalf("err = %v", err)
	}
	if len(evs) != 1 || evs[0].Text != "partial" {
		t.Errorf("events before the error = %+v", evs)
	}
}

func TestCancellation(t *testing.T) {
	m := mustParse(t, `[
		{"user": "hang", "text": "started", "hang": true},
		{"user": "slow", "delayMs": 3600000, "text": "never"},
		{"user": "chunky", "text": "aaaabbbbcccc", "chunk": 4, "chunkDelayMs": 3600000}
	]`)
	for _, user := range []string{"hang", "slow", "chunky"} {
		t.Run(user, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if user == "slow" {
				cancel() // cancelled before the call: ends at once
			}
			llmtest.CancelledAtText(t, ctx, cancel, m, conv("", "u:"+user))
		})
	}
	t.Run("leaving the loop early", func(t *testing.T) {
		for ev := range m.Instant().Stream(t.Context(), conv("", "u:chunky")) {
			if ev.Kind == llm.EventText {
				break
			}
		}
	})
}

// Parallel agents sharing one model get the answers their own
// conversations call for, whatever the interleaving.
func TestConcurrentDeterminism(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "subagents.json"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []*llm.Request{
		conv("parent", "u:please delegate this"),
		conv("parent", "u:please delegate this", "a:", "t:r1", "t:r2"),
		conv("child", "u:Check the tests for: please delegate this"),
		conv("child", "u:Check the docs for: please delegate this"),
		conv("parent", "u:plain"),
	}
	want := make([]llm.Message, len(reqs))
	for i, r := range reqs {
		want[i], _, _ = collect(t, m, r)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for g := range 16 {
		wg.Go(func() {
			for k := range 20 {
				i := (g + k) % len(reqs)
				got, _, _, err := llm.Collect(m.Stream(context.Background(), reqs[i]))
				if err != nil || !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("request %d: got %+v (%v), want %+v", i, got, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if want[0].ToolCalls[1].Arguments != `{"description":"check the docs","prompt":"Check the docs for: please delegate this"}` {
		t.Errorf("delegation call = %+v", want[0].ToolCalls[1])
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"a bad regexp":          `[{"user": "(", "text": "x"}]`,
		"an unknown field":      `[{"usr": "x", "text": "x"}]`,
		"an unknown finish":     `[{"finish": "eos"}]`,
		"a nameless tool call":  `[{"toolCalls": [{"arguments": {}}]}]`,
		"data after the script": `[{"text": "x"}] [{"text": "y"}]`,
		"not JSON":              `rules: []`,
		"a negative chunk":      `[{"text": "x", "chunk": -1}]`,
	}
	for name, js := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(js)); !errors.Is(err, ErrBadScript) {
				t.Errorf("err = %v, want ErrBadScript", err)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestTestdataScriptsLoad(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) < 3 {
		t.Fatalf("testdata scripts = %v", files)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	m, _ := Load(filepath.Join("testdata", "tools.json"))
	msg, _, fr := collect(t, m, conv("sys", "u:please list and grep foo"))
	if fr != llm.FinishToolCalls || len(msg.ToolCalls) != 2 || msg.ToolCalls[1].Arguments != `{"pattern":"please list and grep foo","path":"."}` {
		t.Errorf("parallel calls = %+v", msg.ToolCalls)
	}
}

func TestDefaultAndModels(t *testing.T) {
	msg, _, _ := collect(t, Default(), conv("", "u:ping"))
	if msg.Content != "You said: ping" {
		t.Errorf("default reply = %q", msg.Content)
	}
	infos, err := Default().Models(t.Context())
	if err != nil || len(infos) != 1 || infos[0].ID != "scripted" || infos[0].ContextWindow != DefaultContextWindow {
		t.Errorf("models = %+v, %v", infos, err)
	}
	m := mustParse(t, `{"model": "fake-1", "contextWindow": 4096, "rules": []}`)
	if infos, _ := m.Models(t.Context()); infos[0].ID != "fake-1" || infos[0].ContextWindow != 4096 {
		t.Errorf("models = %+v", infos)
	}
}

func TestScriptFileRoundTrip(t *testing.T) {
	s := Script{Rules: []Rule{
		{User: "hi", Step: Ptr(0), Reasoning: Ptr(""), Text: "hello {{user}}"},
		{ToolCalls: []ToolCall{{Name: "f", Arguments: []byte(`{"a":1}`)}}},
	}}
	m, err := New(s, &Options{Instant: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"rules":[{"user":"hi","step":0,"reasoning":"","text":"hello {{user}}"},{"toolCalls":[{"name":"f","arguments":{"a":1}}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded.Script(), m.Script()) {
		t.Errorf("loaded %+v\nbuilt  %+v", loaded.Script(), m.Script())
	}
}

// BenchmarkStreamInstant measures one whole Stream call in instant mode.
func BenchmarkStreamInstant(b *testing.B) {
	m, err := Load(filepath.Join("testdata", "tools.json"))
	if err != nil {
		b.Fatal(err)
	}
	m = m.Instant()
	req := conv("You are a coding agent.", "u:please read the file", "a:", "t:package main\n\nfunc main() {}\n")
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range m.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
