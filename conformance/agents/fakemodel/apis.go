// This file writes the answer in each API's shape: the event sequence of
// an OpenAI Responses stream, OpenAI Chat Completions chunks, an Anthropic
// Messages stream, and Gemini GenerateContentResponse chunks.

package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// openAIResponses answers POST /v1/responses: created, the message item
// added, text deltas, the item done, completed with usage.
func openAIResponses(w http.ResponseWriter, body []byte) {
	model := modelOf(body, "fake-model")
	item := func(status string, text string) map[string]any {
		content := []any{}
		if status == "completed" {
			content = []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}
		}
		return map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": status, "content": content}
	}
	usage := map[string]any{
		"input_tokens": inputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": outputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": inputTokens + outputTokens,
	}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": "resp_fake", "object": "response", "created_at": 0, "status": status, "model": model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !wantsStream(body) {
		writeJSON(w, response("completed", []any{item("completed", Answer)}))
		return
	}
	s := startSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "response": response("in_progress", []any{})})
	s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item("in_progress", "")})
	for _, p := range pieces {
		s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_fake", "output_index": 0, "content_index": 0, "delta": p})
	}
	done := item("completed", Answer)
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": done})
	s.event("response.completed", map[string]any{"type": "response.completed", "response": response("completed", []any{done})})
}

// openAIChat answers POST /v1/chat/completions: chunks with the role and
// the text, a finish chunk, a usage chunk, [DONE].
func openAIChat(w http.ResponseWriter, body []byte) {
	model := modelOf(body, "fake-model")
	usage := map[string]any{"prompt_tokens": inputTokens, "completion_tokens": outputTokens, "total_tokens": inputTokens + outputTokens}
	if !wantsStream(body) {
		writeJSON(w, map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": Answer}, "finish_reason": "stop"}},
			"usage":   usage})
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	s := startSSE(w)
	for i, p := range pieces {
		d := map[string]any{"content": p}
		if i == 0 {
			d["role"] = "assistant"
		}
		s.event("", chunk(d, nil))
	}
	s.event("", chunk(map[string]any{}, "stop"))
	s.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []any{}, "usage": usage})
	s.raw("[DONE]")
}

// anthropicMessages answers POST /v1/messages: message_start, one text
// block in deltas, message_delta with end_turn, message_stop.
func anthropicMessages(w http.ResponseWriter, body []byte) {
	model := modelOf(body, "claude-fake")
	message := func(content []any, stop any, out int) map[string]any {
		return map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": inputTokens, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
	}
	if !wantsStream(body) {
		writeJSON(w, message([]any{map[string]any{"type": "text", "text": Answer}}, "end_turn", outputTokens))
		return
	}
	s := startSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": message([]any{}, nil, 1)})
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	s.event("ping", map[string]any{"type": "ping"})
	for _, p := range pieces {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": p}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": outputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// gemini answers models/M:generateContent and :streamGenerateContent
// (SSE with alt=sse, else a JSON array of chunks). A request for JSON
// output (gemini-cli's model router and next-speaker check send one) gets
// a JSON value that fits the schema it names, so that it parses.
func gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		GenerationConfig struct {
			ResponseMimeType   string `json:"responseMimeType"`
			ResponseSchema     any    `json:"responseSchema"`
			ResponseJSONSchema any    `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req)
	parts := pieces
	if gc := req.GenerationConfig; gc.ResponseMimeType == "application/json" {
		schema := gc.ResponseJSONSchema
		if schema == nil {
			schema = gc.ResponseSchema
		}
		b, _ := json.Marshal(fill(schema))
		parts = []string{string(b)}
	}
	model := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	model, _, _ = strings.Cut(model, ":")
	chunk := func(text string, last bool) map[string]any {
		cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": model}
		if last {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = map[string]any{"promptTokenCount": inputTokens, "candidatesTokenCount": outputTokens, "totalTokenCount": inputTokens + outputTokens}
		}
		return c
	}
	if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		writeJSON(w, chunk(strings.Join(parts, ""), true))
		return
	}
	if r.URL.Query().Get("alt") != "sse" {
		var all []any
		for i, p := range parts {
			all = append(all, chunk(p, i == len(parts)-1))
		}
		writeJSON(w, all)
		return
	}
	s := startSSE(w)
	for i, p := range parts {
		s.event("", chunk(p, i == len(parts)-1))
	}
}

// fill returns a value that satisfies a (Gemini or JSON) schema: the first
// enum value, "fake", 1, false, [], and objects with every property
// filled; anything else is an empty object.
func fill(schema any) any {
	m, _ := schema.(map[string]any)
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := m["type"].(string)
	switch strings.ToLower(typ) {
	case "string":
		return "fake"
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	for k, p := range props {
		out[k] = fill(p)
	}
	return out
}
