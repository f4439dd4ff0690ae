// Package llm defines the streaming model interface the agent loop talks to,
// and the vocabulary shared by every backend: messages, tool calls, usage and
// finish reasons.
//
// The package imports nothing of the project. Backends live below it:
// agent/llm/openai (OpenAI-compatible Chat Completions over SSE, DeepSeek by
// default) and agent/llm/scripted (a deterministic model for tests, demos
// and offline use).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Role is the author of a [Message].
type Role string

// Roles of the Chat Completions conversation model.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Image is an image attached to a user message. Data is base64 text, as ACP
// and the Chat Completions API both carry it.
type Image struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// Message is one entry of a conversation. Messages are immutable once they
// are part of a history: the agent appends, it never edits, so a forked
// child can share its parent's prefix without copying it.
type Message struct {
	Role    Role    `json:"role"`
	Content string  `json:"content,omitempty"`
	Images  []Image `json:"images,omitempty"`

	// Reasoning is the model's reasoning exactly as the backend sent it. Nil
	// means the backend sent no reasoning field at all; a pointer to "" means
	// it sent the field empty. The difference matters to DeepSeek, which
	// requires the field back on every assistant message of a tool loop.
	Reasoning *string `json:"reasoning,omitempty"`

	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`

	// ToolCallID links a RoleTool message to the call it answers.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Clone returns a deep copy of m, so a consumer can never change what the
// producer holds.
func (m Message) Clone() Message {
	c := m
	if m.Images != nil {
		c.Images = append([]Image(nil), m.Images...)
	}
	if m.Reasoning != nil {
		r := *m.Reasoning
		c.Reasoning = &r
	}
	if m.ToolCalls != nil {
		c.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
	}
	return c
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text the model wrote. It may be invalid JSON;
	// the agent checks it before running anything.
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	// Model is the backend's model id (for example "deepseek-flash").
	Model string
	// System, when set, is the system prompt, sent before Messages. It is
	// separate so that a request can share the history's storage instead
	// of copying it behind a system message.
	System string
	// Messages is the conversation; the backend must not modify it.
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the output tokens of this call; 0 leaves it to the
	// backend.
	MaxTokens int
	// JSONOutput asks for a JSON object answer where the backend supports it.
	JSONOutput bool
	// Thinking, when set, turns the model's thinking on or off for this
	// call, on a backend that can ([ThinkingSwitch]); nil leaves it to
	// the backend's setting.
	Thinking *bool
}

// EventKind tells which field of an [Event] is set.
type EventKind uint8

// Kinds of stream events.
const (
	// EventText is a piece of the answer text (Event.Text).
	EventText EventKind = iota + 1
	// EventReasoning is a piece of the model's reasoning (Event.Text). An
	// empty Text still means "the reasoning field was present".
	EventReasoning
	// EventToolCall is one tool call whose arguments are complete
	// (Event.ToolCall). Tool calls arrive after the text of the response.
	EventToolCall
	// EventUsage reports the token usage of the call (Event.Usage).
	EventUsage
	// EventFinish ends the stream with Event.Finish. A stream that ends
	// without it has failed.
	EventFinish
)

// Event is one item of a model stream.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
	Usage    *Usage
	Finish   FinishReason
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	ReasoningTokens   int64 `json:"reasoningTokens,omitempty"`
}

// Add accumulates u into a running total.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.TotalTokens += o.TotalTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Sleep waits d, or until ctx ends, whichever comes first, and returns
// ctx's error when ctx ended: the wait of a backend's retry and of a
// scripted model's delay. d <= 0 does not wait.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Since is what was spent between the running total before and u, field
// by field: the inverse of [Usage.Add]. A field that went down (a total
// that was reset) comes out negative; the caller decides what that means.
func (u Usage) Since(before Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens - before.InputTokens,
		OutputTokens:      u.OutputTokens - before.OutputTokens,
		TotalTokens:       u.TotalTokens - before.TotalTokens,
		CachedInputTokens: u.CachedInputTokens - before.CachedInputTokens,
		ReasoningTokens:   u.ReasoningTokens - before.ReasoningTokens,
	}
}

// FinishReason says why the model stopped. Backends map their own values
// onto these; anything they cannot map is an error, not a FinishReason.
type FinishReason string

// Finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// Model is a streaming chat model.
//
// Stream starts one call and yields its events in order. The sequence ends
// after an EventFinish, or with a non-nil error (the error is the last item).
// A consumer that stops ranging aborts the call and releases its
// connection. Stream must honour ctx: cancelling it ends the sequence
// promptly with ctx's error.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// Info describes one model a backend offers.
type Info struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// ContextWindow is the model's context size in tokens; 0 when unknown.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Images reports whether the model accepts image input.
	Images bool `json:"images,omitempty"`
}

// Lister is implemented by backends that can list their models (the
// OpenAI-compatible GET /models). It feeds the model selector config option.
type Lister interface {
	Models(ctx context.Context) ([]Info, error)
}

// ThinkingSwitch is implemented by backends that may turn the model's
// thinking on and off per request ([Request.Thinking]). ThinkingSwitch
// reports whether this one can (ok), and whether thinking is on when a
// request leaves it to the backend. It feeds the thinking config option.
type ThinkingSwitch interface {
	ThinkingSwitch() (on, ok bool)
}

// APIError is a failure reported by a model server. It keeps the HTTP
// status and body so callers branch on fields, never on text.
type APIError struct {
	Status int
	// Code and Message come from the server's error body when it has one.
	Code    string
	Message string
	Body    string
	// RetryAfter is the server's Retry-After, in seconds; 0 when absent.
	RetryAfter float64
	// retryable is decided by the backend, which knows its server's habits.
	retryable bool
	cause     error
}

// NewAPIError returns an APIError; retryable says whether the same request
// may be sent again.
func NewAPIError(status int, code, message, body string, retryable bool, cause error) *APIError {
	return &APIError{Status: status, Code: code, Message: message, Body: body, retryable: retryable, cause: cause}
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Body
	}
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	if e.Status == 0 {
		return "llm: " + msg
	}
	return fmt.Sprintf("llm: HTTP %d: %s", e.Status, msg)
}

// Unwrap returns the transport error behind e, if any.
func (e *APIError) Unwrap() error { return e.cause }

// Retryable reports whether the request may be sent again unchanged.
func (e *APIError) Retryable() bool { return e.retryable }

// ErrTruncated is returned when a stream ends without a finish reason.
var ErrTruncated = errors.New("llm: stream ended without a finish reason")

// Collect drains a stream into one assistant message, its usage and its
// finish reason. It is the non-streaming view of [Model.Stream].
func Collect(seq iter.Seq2[Event, error]) (Message, Usage, FinishReason, error) {
	msg := Message{Role: RoleAssistant}
	var usage Usage
	var reasoning []byte
	sawReasoning := false
	var text []byte
	for ev, err := range seq {
		if err != nil {
			return msg, usage, "", err
		}
		switch ev.Kind {
		case EventText:
			text = append(text, ev.Text...)
		case EventReasoning:
			sawReasoning = true
			reasoning = append(reasoning, ev.Text...)
		case EventToolCall:
			msg.ToolCalls = append(msg.ToolCalls, *ev.ToolCall)
		case EventUsage:
			usage.Add(*ev.Usage)
		case EventFinish:
			msg.Content = string(text)
			if sawReasoning {
				r := string(reasoning)
				msg.Reasoning = &r
			}
			return msg, usage, ev.Finish, nil
		}
	}
	msg.Content = string(text)
	return msg, usage, "", ErrTruncated
}
