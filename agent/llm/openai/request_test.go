package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// toolLoop is a history with two tool turns: one whose reasoning came back
// "", one with text, and a later user turn.
func toolLoop(firstReasoning *string) *llm.Request {
	return &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "look", Images: []llm.Image{{MimeType: "image/png", Data: "iVBORw0KGgo="}}},
			{Role: llm.RoleAssistant, Reasoning: firstReasoning, ToolCalls: []llm.ToolCall{
				{ID: "call_0", Name: "read_file", Arguments: `{"path":"main.go"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_0", Content: "package main"},
			{Role: llm.RoleAssistant, Reasoning: ptr("It is Go.\nDone."), Content: "A Go file."},
			{Role: llm.RoleUser, Content: "thanks"},
			{Role: llm.RoleAssistant, Content: "no reasoning here"},
			{Role: llm.RoleUser, Content: "again"},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "noop", Description: "Nothing."},
		},
		MaxTokens: 1000,
	}
}

func TestRequestBodyDeepSeek(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ExtraBody = map[string]any{"user_id": "u-1"}
		o.ReasoningEffort = "high"
	})
	h.srv.ValidateDeepSeek(true)
	h.srv.Enqueue(openaitest.Text("ok"))
	if _, err := h.run(t.Context(), toolLoop(ptr(""))); err != nil {
		t.Fatal(err)
	}
	r := h.srv.Requests()[0]
	c := r.Chat
	if r.Header.Get("Authorization") != "Bearer sk-test-secret-key" || r.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", r.Header)
	}
	if c.Model != "deepseek-flash" || !c.Stream || !c.IncludeUsage() {
		t.Errorf("model %q stream %v include_usage %v", c.Model, c.Stream, c.IncludeUsage())
	}
	if c.Thinking == nil || c.Thinking.Type != "enabled" || c.ReasoningEffort != "high" {
		t.Errorf("thinking = %+v, effort %q", c.Thinking, c.ReasoningEffort)
	}
	if c.ToolChoice != nil {
		t.Errorf("tool_choice = %s, want none sent", c.ToolChoice)
	}
	if c.MaxTokens == nil || *c.MaxTokens != 1000 || c.MaxCompletionTokens != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", c.MaxTokens, c.MaxCompletionTokens)
	}
	if string(c.Fields["user_id"]) != `"u-1"` {
		t.Errorf("user_id = %s", c.Fields["user_id"])
	}
	if _, ok := c.Fields["parallel_tool_calls"]; ok {
		t.Error("parallel_tool_calls sent to DeepSeek")
	}
	if len(c.Tools) != 2 || c.Tools[0].Type != "function" || c.Tools[0].Function.Name != "read_file" ||
		string(c.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("tools = %+v", c.Tools)
	}
	m := c.Messages
	if len(m) != 8 {
		t.Fatalf("messages = %d", len(m))
	}
	if urls := m[1].ImageURLs(); len(urls) != 1 || urls[0] != "data:image/png;base64,iVBORw0KGgo=" || m[1].Text() != "look" {
		t.Errorf("user image message = %s", m[1].Content)
	}
	if m[2].ReasoningContent == nil || *m[2].ReasoningContent != "" {
		t.Errorf("empty reasoning not echoed verbatim: %s", m[2].Fields["reasoning_content"])
	}
	if tc := m[2].ToolCalls; len(tc) != 1 || tc[0].ID != "call_0" || tc[0].Type != "function" ||
		tc[0].Function.Name != "read_file" || tc[0].Function.Arguments != `{"path":"main.go"}` {
		t.Errorf("tool calls = %+v", tc)
	}
	if m[3].Role != "tool" || m[3].ToolCallID != "call_0" || m[3].Text() != "package main" {
		t.Errorf("tool result = %+v", m[3])
	}
	if m[4].ReasoningContent == nil || *m[4].ReasoningContent != "It is Go.\nDone." {
		t.Errorf("reasoning not echoed verbatim: %s", m[4].Fields["reasoning_content"])
	}
	if _, ok := m[6].Fields["reasoning_content"]; ok {
		t.Errorf("reasoning_content invented for a message that had none and no tool calls")
	}
}

func TestRequestReasoningPlaceholder(t *testing.T) {
	tests := []struct {
		name        string
		placeholder *string
		wantErr     bool
		rejectEmpty bool
	}{
		{name: "DeepSeek's default sends an empty placeholder", placeholder: ptr("")},
		{name: "a space placeholder passes a server refusing empty reasoning", placeholder: ptr(" "), rejectEmpty: true},
		{name: "an empty placeholder fails such a server", placeholder: ptr(""), rejectEmpty: true, wantErr: true},
		{name: "no placeholder fails DeepSeek's validation", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				c := DeepSeekCompat()
				c.ReasoningPlaceholder = tt.placeholder
				o.Compat = &c
			})
			h.srv.ValidateDeepSeek(true)
			h.srv.RejectEmptyReasoning(tt.rejectEmpty)
			h.srv.Enqueue(openaitest.Text("ok"))
			_, err := h.run(t.Context(), toolLoop(nil))
			if tt.wantErr {
				e := apiError(t, err)
				if e.Status != 400 || !strings.Contains(e.Message, "reasoning_content") {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRequestDeepSeekValidation(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.DefaultModel = "deepseek-chat" })
	h.srv.ValidateDeepSeek(true)
	_, err := h.run(t.Context(), userReq("hi"))
	if e := apiError(t, err); e.Status != 400 || e.Message != "Model Not Exist" {
		t.Errorf("err = %v", err)
	}
}

func TestRequestBodyOtherBackends(t *testing.T) {
	tests := []struct {
		name   string
		preset func() Options
		mod    func(*Options)
		check  func(t *testing.T, c *openaitest.ChatRequest)
	}{
		{
			name:   "OpenAI uses max_completion_tokens and echoes no reasoning",
			preset: OpenAI,
			mod:    func(o *Options) { o.ReasoningEffort = "low" },
			check: func(t *testing.T, c *openaitest.ChatRequest) {
				if c.MaxCompletionTokens == nil || c.MaxTokens != nil || c.ReasoningEffort != "low" || c.Thinking != nil {
					t.Errorf("max_tokens %v max_completion_tokens %v effort %q thinking %v",
						c.MaxTokens, c.MaxCompletionTokens, c.ReasoningEffort, c.Thinking)
				}
				for _, m := range c.Messages {
					if _, ok := m.Fields["reasoning_content"]; ok {
						t.Errorf("reasoning echoed to OpenAI")
					}
				}
			},
		},
		{
			name:   "DeepSeek with thinking disabled",
			preset: DeepSeek,
			mod:    func(o *Options) { o.DisableThinking = true; o.ReasoningEffort = "max" },
			check: func(t *testing.T, c *openaitest.ChatRequest) {
				if c.Thinking == nil || c.Thinking.Type != "disabled" || c.ReasoningEffort != "" {
					t.Errorf("thinking %+v effort %q", c.Thinking, c.ReasoningEffort)
				}
			},
		},
		{
			name:   "llama.cpp asks for parallel tool calls",
			preset: LlamaCpp,
			check: func(t *testing.T, c *openaitest.ChatRequest) {
				if c.ParallelToolCalls == nil || !*c.ParallelToolCalls {
					t.Errorf("parallel_tool_calls = %v", c.ParallelToolCalls)
				}
			},
		},
		{
			name:   "OpenRouter sends no stream_options",
			preset: OpenRouter,
			check: func(t *testing.T, c *openaitest.ChatRequest) {
				if c.StreamOptions != nil {
					t.Errorf("stream_options = %+v", c.StreamOptions)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				base := o.BaseURL
				*o = tt.preset()
				o.BaseURL = base
				if o.DefaultModel == "" {
					o.DefaultModel = "m"
				}
				if tt.mod != nil {
					tt.mod(o)
				}
			})
			h.srv.Enqueue(openaitest.Text("ok"))
			if _, err := h.run(t.Context(), toolLoop(ptr("r"))); err != nil {
				t.Fatal(err)
			}
			tt.check(t, h.srv.ChatRequests()[0])
		})
	}
}

func TestAPIKeyIsRedacted(t *testing.T) {
	o := DeepSeek()
	o.APIKey = "sk-very-secret"
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("options", "opts", o, "key", o.APIKey)
	// Options as a whole does not encode (its HTTP client holds funcs), so
	// the key is encoded as a field, as a config dump would hold it.
	js, err := json.Marshal(struct{ Compat, Key any }{o.Compat, o.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{
		"%v": fmt.Sprintf("%v", o), "%+v": fmt.Sprintf("%+v", o), "%#v": fmt.Sprintf("%#v", o),
		"%s": fmt.Sprint(o.APIKey), "slog": logs.String(), "json": string(js),
	} {
		if strings.Contains(s, "sk-very-secret") {
			t.Errorf("%s leaks the key: %s", name, s)
		}
	}
	if o.APIKey.Reveal() != "sk-very-secret" {
		t.Error("Reveal lost the key")
	}
}

func TestARequestsThinkingOverridesTheBackendsSetting(t *testing.T) {
	for _, tt := range []struct {
		name     string
		disabled bool
		thinking *bool
		want     string
	}{
		{"on by default, off for this request", false, ptr(false), "disabled"},
		{"off by --thinking, on for this request", true, ptr(true), "enabled"},
		{"off by --thinking, left to the backend", true, nil, "disabled"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.DisableThinking = tt.disabled })
			h.srv.Enqueue(openaitest.Text("ok"))
			req := userReq("hi")
			req.Thinking = tt.thinking
			if _, err := h.run(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			if c := h.srv.ChatRequests()[0]; c.Thinking == nil || c.Thinking.Type != tt.want {
				t.Errorf("thinking %+v, want %q", c.Thinking, tt.want)
			}
			if on, ok := h.c.ThinkingSwitch(); !ok || on == tt.disabled {
				t.Errorf("ThinkingSwitch() = %v, %v", on, ok)
			}
		})
	}
}

func TestOnlyABackendWithAThinkingObjectCanSwitchThinking(t *testing.T) {
	for name, preset := range map[string]func() Options{"OpenAI": OpenAI, "Ollama": Ollama} {
		o := preset()
		o.BaseURL = "http://127.0.0.1:1/v1"
		o.DefaultModel = "m"
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.ThinkingSwitch(); ok {
			t.Errorf("%s says it can switch thinking per request", name)
		}
	}
}
