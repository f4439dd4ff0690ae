// Request encoding: llm.Request to a Chat Completions body.

package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dshd/dshd/agent/llm"
)

type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	Thinking            *thinking       `json:"thinking,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type thinking struct {
	Type string `json:"type"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wirePart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// wireMessage is one message; its reasoning goes out under a field name
// chosen per backend, hence the hand-written MarshalJSON.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // a string, or []wirePart with images
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`

	reasoning    *string
	reasoningKey string
}

func (m wireMessage) MarshalJSON() ([]byte, error) {
	type plain wireMessage
	b, err := json.Marshal(plain(m))
	if err != nil || m.reasoning == nil {
		return b, err
	}
	key, _ := json.Marshal(m.reasoningKey)
	val, _ := json.Marshal(*m.reasoning)
	out := make([]byte, 0, len(b)+len(key)+len(val)+2)
	out = append(out, b[:len(b)-1]...)
	out = append(out, ',')
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, val...)
	return append(out, '}'), nil
}

var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the body of a streaming chat request.
func (c *Client) encode(req *llm.Request, model string) ([]byte, error) {
	cp := &c.opts.compat
	w := wireRequest{Model: model, Stream: true, Messages: make([]wireMessage, 0, len(req.Messages)+1)}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: string(llm.RoleSystem), Content: req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		wm := wireMessage{Role: string(m.Role), Content: m.Content}
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
		if m.Role == llm.RoleUser && len(m.Images) > 0 {
			parts := make([]wirePart, 0, len(m.Images)+1)
			if m.Content != "" {
				parts = append(parts, wirePart{Type: "text", Text: m.Content})
			}
			for _, im := range m.Images {
				parts = append(parts, wirePart{Type: "image_url", ImageURL: &imageURL{
					URL: "data:" + im.MimeType + ";base64," + im.Data,
				}})
			}
			wm.Content = parts
		}
		if m.Role == llm.RoleTool {
			wm.ToolCallID = m.ToolCallID
		}
		if m.Role == llm.RoleAssistant {
			for _, tc := range m.ToolCalls {
				var wt wireToolCall
				wt.ID, wt.Type = tc.ID, "function"
				wt.Function.Name, wt.Function.Arguments = tc.Name, tc.Arguments
				wm.ToolCalls = append(wm.ToolCalls, wt)
			}
			if cp.EchoReasoning {
				wm.reasoningKey = cp.ReasoningField
				wm.reasoning = m.Reasoning
				if wm.reasoning == nil && len(m.ToolCalls) > 0 {
					wm.reasoning = cp.ReasoningPlaceholder
				}
			}
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		p := t.Parameters
		if len(bytes.TrimSpace(p)) == 0 || string(p) == "null" {
			p = emptyParameters
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{
			Name: t.Name, Description: t.Description, Parameters: p,
		}})
	}
	if cp.SendStreamOptions {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		if cp.MaxTokensField == "max_completion_tokens" {
			w.MaxCompletionTokens = &n
		} else {
			w.MaxTokens = &n
		}
	}
	on := !c.opts.DisableThinking
	if req.Thinking != nil {
		on = *req.Thinking
	}
	switch cp.Thinking {
	case ThinkingObject:
		w.Thinking = &thinking{Type: "enabled"}
		if !on {
			w.Thinking.Type = "disabled"
		}
		if on {
			w.ReasoningEffort = c.opts.ReasoningEffort
		}
	case ThinkingEffort:
		if on {
			w.ReasoningEffort = c.opts.ReasoningEffort
		}
	}
	if cp.ParallelToolCalls && len(w.Tools) > 0 {
		w.ParallelToolCalls = ptr(true)
	}
	if req.JSONOutput {
		w.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	// No tool_choice, ever: "auto" is the default, and DeepSeek's thinking
	// mode rejects a forced one (llm-backends.md §1.4).

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&w); err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	if len(c.opts.ExtraBody) == 0 {
		return body, nil
	}
	extra, err := json.Marshal(c.opts.ExtraBody)
	if err != nil {
		return nil, fmt.Errorf("openai: encode ExtraBody: %w", err)
	}
	if len(extra) <= 2 {
		return body, nil
	}
	out := append(body[:len(body)-1:len(body)-1], ',')
	return append(out, extra[1:]...), nil
}
