// Chunk decoding: deltas, reasoning, tool-call accumulation, usage and
// finish reasons (llm-backends.md §2.2–§2.5).

package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/reason"
)

// ErrUnknownFinishReason is returned for a finish_reason the client cannot
// map onto an [llm.FinishReason]; the error text names the raw value.
var ErrUnknownFinishReason = errors.New("openai: unknown finish reason")

// Wire shapes of a response. Every field is optional; unknown ones are
// ignored, and a field of an unexpected type is skipped (see decodeChunk).
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Message      wireDelta `json:"message"` // non-streaming responses
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content          *string             `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        json.RawMessage     `json:"reasoning"` // a string, or an object at some routers
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *int            `json:"index"`
	ID       json.RawMessage `json:"id"` // string, or an integer at some servers
	Function struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a JSON string; an object at some servers
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens         int64 `json:"prompt_tokens"`
	CompletionTokens     int64 `json:"completion_tokens"`
	TotalTokens          int64 `json:"total_tokens"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails  *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *wireUsage) toLLM() *llm.Usage {
	out := &llm.Usage{
		InputTokens:       u.PromptTokens,
		OutputTokens:      u.CompletionTokens,
		TotalTokens:       u.TotalTokens,
		CachedInputTokens: u.PromptCacheHitTokens,
	}
	if out.CachedInputTokens == 0 && u.PromptTokensDetails != nil {
		out.CachedInputTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	return out
}

// decodeChunk unmarshals tolerantly: encoding/json fills every field it can
// and reports the first type mismatch at the end, which we ignore, so one
// odd field (a number where a string was expected) costs only that field.
func decodeChunk(data []byte, c *wireChunk) error {
	*c = wireChunk{}
	err := json.Unmarshal(data, c)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}

// Reasoning field spellings; the first one seen in a stream wins.
const (
	spellNone = iota
	spellReasoningContent
	spellReasoning
)

// decoder turns decoded chunks into llm events. It is the whole state of
// one response; the transport feeds it data events in order.
type decoder struct {
	// max bounds used: what the answer so far holds of text, reasoning
	// and tool calls (Options.MaxAnswerBytes).
	max, used     int
	spelling      int
	sentReasoning bool
	calls         []*callSlot
	byIndex       map[int]*callSlot
	finish        llm.FinishReason
	finished      bool
	usage         *llm.Usage
	chunk         wireChunk
}

// callCost is what a tool call counts against Options.MaxAnswerBytes
// beside its id, name and arguments: about what its slot costs, so that a
// stream of empty calls at ever new indexes is bounded too.
const callCost = 64

type callSlot struct {
	index int
	order int
	id    string
	name  string
	args  []byte // the JSON-escaped text of the argument fragments, joined
}

// feed decodes one data event and appends the events it yields to out.
func (d *decoder) feed(data []byte, out []llm.Event) ([]llm.Event, error) {
	if err := decodeChunk(data, &d.chunk); err != nil {
		return out, fmt.Errorf("openai: bad stream chunk: %w (%.200q)", err, data)
	}
	c := &d.chunk
	if len(c.Error) > 0 && string(c.Error) != "null" {
		if d.finished {
			return out, nil // the answer is complete; a late error changes nothing
		}
		return out, streamError(c.Error)
	}
	if c.Usage != nil {
		d.usage = c.Usage.toLLM() // keep the last: some servers send it on every chunk
	}
	if d.finished {
		return out, nil
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // dshd always asks for one choice
		}
		var err error
		if out, err = d.delta(&ch.Delta, out); err != nil {
			return out, err
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if out, err = d.finishWith(*ch.FinishReason, out); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// delta appends the events of one delta to out. It counts what the delta
// adds to the answer first, so that a delta that would take the answer
// past its bound gives the consumer nothing of it: the consumer, which
// keeps the text and reasoning, never holds more than the bound.
func (d *decoder) delta(dl *wireDelta, out []llm.Event) ([]llm.Event, error) {
	for i := range dl.ToolCalls {
		d.toolFragment(&dl.ToolCalls[i])
	}
	r, hasReasoning := d.reasoning(dl)
	d.used += len(r)
	if dl.Content != nil {
		d.used += len(*dl.Content)
	}
	if d.used > d.max {
		return out, passedAnswer
	}
	if hasReasoning {
		// An empty fragment still says "the field was present"; say it once.
		if r != "" || !d.sentReasoning {
			out = append(out, llm.Event{Kind: llm.EventReasoning, Text: r})
			d.sentReasoning = true
		}
	}
	if dl.Content != nil && *dl.Content != "" {
		out = append(out, llm.Event{Kind: llm.EventText, Text: *dl.Content})
	}
	return out, nil
}

// reasoning reads reasoning_content, else reasoning; once a stream used one
// spelling, the other is ignored, so a server sending both never doubles it.
func (d *decoder) reasoning(dl *wireDelta) (string, bool) {
	if dl.ReasoningContent != nil && d.spelling != spellReasoning {
		d.spelling = spellReasoningContent
		return *dl.ReasoningContent, true
	}
	if r := dl.Reasoning; len(r) >= 2 && r[0] == '"' && d.spelling != spellReasoningContent {
		if s, ok := jsonString(r); ok {
			d.spelling = spellReasoning
			return s, true
		}
	}
	return "", false
}

// toolFragment accumulates one tool-call fragment by index, with the
// robust rules of §2.3: the name is assigned, never appended; a missing
// index is 0; a new id (or a different name) at an index in use opens a new
// slot, as Ollama sends every parallel call at index 0. What the slot
// comes to hold is counted in d.used.
func (d *decoder) toolFragment(f *wireToolCallDelta) {
	idx := 0
	if f.Index != nil {
		idx = *f.Index
	}
	id := rawID(f.ID)
	name := ""
	if f.Function.Name != nil {
		name = *f.Function.Name
	}
	slot := d.byIndex[idx]
	switch {
	case slot == nil:
	case id != "" && slot.id != "" && id != slot.id:
		slot = nil
	case id == "" && name != "" && slot.name != "" && name != slot.name:
		slot = nil
	}
	if slot == nil {
		slot = &callSlot{index: idx, order: len(d.calls)}
		d.calls = append(d.calls, slot)
		if d.byIndex == nil {
			d.byIndex = make(map[int]*callSlot)
		}
		d.byIndex[idx] = slot
		d.used += callCost
	}
	if id != "" && slot.id == "" {
		slot.id = id
		d.used += len(id)
	}
	if name != "" && name != slot.name {
		slot.name = name
		d.used += len(name)
	}
	n := len(slot.args)
	slot.args = appendArgs(slot.args, f.Function.Arguments)
	d.used += len(slot.args) - n
}

// rawID stringifies an id that may be a JSON string or a number.
func rawID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		s, _ := jsonString(raw)
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// jsonString decodes a raw JSON string.
func jsonString(raw []byte) (string, bool) {
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// appendArgs appends an arguments fragment still JSON-escaped: the parts
// are unescaped once, joined, at the end. A fragment boundary can then fall
// anywhere, even between the two \u escapes of a surrogate pair or inside a
// multi-byte character, without corrupting the text.
func appendArgs(buf []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return buf
	case raw[0] == '"' && len(raw) >= 2 && raw[len(raw)-1] == '"':
		return append(buf, raw[1:len(raw)-1]...)
	default:
		// Arguments sent as a JSON value rather than a string: escape its text.
		q, _ := json.Marshal(string(raw))
		return append(buf, q[1:len(q)-1]...)
	}
}

func unescapeArgs(esc []byte) string {
	if len(esc) == 0 {
		return ""
	}
	q := make([]byte, 0, len(esc)+2)
	q = append(q, '"')
	q = append(q, esc...)
	q = append(q, '"')
	var s string
	if json.Unmarshal(q, &s) != nil {
		// Not a valid JSON string body (a server that did not escape):
		// hand over the bytes; the agent validates arguments anyway.
		return string(esc)
	}
	return s
}

// finishWith maps the finish reason and emits the accumulated tool calls,
// in index order (arrival order within one index).
func (d *decoder) finishWith(raw string, out []llm.Event) ([]llm.Event, error) {
	var fr llm.FinishReason
	switch raw {
	case "stop":
		fr = llm.FinishStop
	case "length":
		fr = llm.FinishLength
	case "tool_calls", "function_call":
		fr = llm.FinishToolCalls
	case "content_filter":
		fr = llm.FinishContentFilter
	case "insufficient_system_resource":
		return out, llm.NewAPIError(0, raw,
			"generation cut off: the server ran short of resources (insufficient_system_resource); try again",
			"", true, nil)
	default:
		return out, fmt.Errorf("%w %q", ErrUnknownFinishReason, raw)
	}
	if len(d.calls) > 0 && fr == llm.FinishStop {
		// Some servers end a tool-call turn with "stop"; the calls decide.
		fr = llm.FinishToolCalls
	}
	d.finished = true
	d.finish = fr
	slices.SortStableFunc(d.calls, func(a, b *callSlot) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return a.order - b.order
	})
	used := make(map[string]bool, len(d.calls))
	for _, s := range d.calls {
		used[s.id] = true
	}
	for i, s := range d.calls {
		id := s.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
			for n := 1; used[id]; n++ {
				id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(n)
			}
			used[id] = true
		}
		out = append(out, llm.Event{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{
			ID: id, Name: s.name, Arguments: unescapeArgs(s.args),
		}})
	}
	return out, nil
}

// wireError is the body of an HTTP error and of an in-stream error event.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // string at OpenAI and DeepSeek, number at OpenRouter
	// Data, Details and Reason carry the human reason when Message only
	// names the failure ("Internal error"): gateways that wrap another
	// server answer JSON-RPC-shaped errors, others add a details member.
	Data    json.RawMessage `json:"data"`
	Details json.RawMessage `json:"details"`
	Reason  json.RawMessage `json:"reason"`
}

// text is the error's human text, found by the one rule dshd applies to
// every peer's error ([reason.Of]); "" when the server said nothing.
func (w *wireError) text() string {
	var data any
	switch {
	case len(w.Data) > 0:
		data = w.Data
	case len(w.Details) > 0 || len(w.Reason) > 0:
		m := map[string]json.RawMessage{}
		if len(w.Reason) > 0 {
			m["reason"] = w.Reason
		}
		if len(w.Details) > 0 {
			m["details"] = w.Details
		}
		data = m
	case w.Message == "":
		return ""
	}
	return reason.Of(0, w.Message, data)
}

func (w *wireError) code() string {
	if c := rawID(w.Code); c != "" {
		return c
	}
	return w.Type
}

// streamError turns an in-stream {"error": {...}} object into an error.
// OpenRouter's numeric codes are HTTP statuses; 429 and 5xx may be retried.
func streamError(raw json.RawMessage) error {
	var w wireError
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &w.Message)
	} else {
		_ = json.Unmarshal(raw, &w)
	}
	code := w.code()
	retryable := false
	if n, err := strconv.Atoi(code); err == nil && (n == 429 || n >= 500) {
		retryable = true
	}
	switch code {
	case "server_error", "rate_limit_exceeded", "overloaded_error":
		retryable = true
	}
	msg := w.text()
	if msg == "" {
		msg = "error event in stream"
	}
	return llm.NewAPIError(0, code, msg, string(raw), retryable, nil)
}

// decodeCompletion turns a non-streaming response body (a server that
// ignored "stream": true) into the same events a stream would give.
func (d *decoder) decodeCompletion(body []byte) ([]llm.Event, error) {
	body = bytes.TrimSpace(body) // DeepSeek sends blank keep-alive lines first
	if err := decodeChunk(body, &d.chunk); err != nil {
		return nil, fmt.Errorf("openai: bad response body: %w (%.200q)", err, body)
	}
	c := &d.chunk
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return nil, streamError(c.Error)
	}
	var out []llm.Event
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		for j := range ch.Message.ToolCalls {
			if ch.Message.ToolCalls[j].Index == nil {
				ch.Message.ToolCalls[j].Index = ptr(j)
			}
		}
		var err error
		if out, err = d.delta(&ch.Message, out); err != nil {
			return out, err
		}
		fr := "stop"
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			fr = *ch.FinishReason
		}
		if out, err = d.finishWith(fr, out); err != nil {
			return out, err
		}
	}
	if !d.finished {
		return out, fmt.Errorf("openai: response has no choice: %w", llm.ErrTruncated)
	}
	if c.Usage != nil {
		d.usage = c.Usage.toLLM()
	}
	return out, nil
}
