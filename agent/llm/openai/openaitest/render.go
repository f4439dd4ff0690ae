// Rendering a Reply: the SSE stream (with its framing and failure
// injections) and the non-streaming JSON body.

package openaitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

const created = 1760000000

type streamer struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	req  *ChatRequest
	rep  *Reply
	seq  int
	body int
	nl   string
	// written counts the body's bytes (for a Flood).
	written int64
}

// rawArg is an arguments fragment written with only the escapes JSON
// requires: other bytes go out raw, even a cut multi-byte character.
type rawArg string

func (a rawArg) MarshalJSON() ([]byte, error) {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(a)+2)
	b = append(b, '"')
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), nil
}

// verbatim is the body of a JSON string written exactly as given.
type verbatim string

func (v verbatim) MarshalJSON() ([]byte, error) { return []byte(`"` + string(v) + `"`), nil }

type envelope struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           json.RawMessage `json:"choices"`
	Usage             any             `json:"usage"`
	// Obfuscation is an unknown field, as OpenAI adds; clients ignore it.
	Obfuscation string `json:"obfuscation"`
}

type choice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta,omitempty"`
	Message      map[string]any `json:"message,omitempty"`
	Logprobs     any            `json:"logprobs"`
	FinishReason any            `json:"finish_reason"`
}

func (st *streamer) reasoningField() string {
	if st.rep.ReasoningField != "" {
		return st.rep.ReasoningField
	}
	return "reasoning_content"
}

func (st *streamer) finish() string {
	if st.rep.Finish != "" {
		return st.rep.Finish
	}
	if len(st.rep.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// usage returns the reply's usage, computed from sizes when not given.
func (st *streamer) usage() Usage {
	if st.rep.Usage != nil {
		return *st.rep.Usage
	}
	out, reasoning := 0, 0
	for _, r := range st.rep.Reasoning {
		reasoning += len(r)
	}
	for _, t := range st.rep.Text {
		out += len(t)
	}
	for _, tc := range st.rep.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	return Usage{
		PromptTokens:     int64(st.body/4 + 1),
		CompletionTokens: int64((out+reasoning)/4 + 1),
		ReasoningTokens:  int64(reasoning / 4),
	}
}

func usageJSON(u Usage) map[string]any {
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	miss := u.CacheMiss
	if miss == 0 {
		miss = u.PromptTokens - u.CacheHit
	}
	return map[string]any{
		"prompt_tokens":             u.PromptTokens,
		"completion_tokens":         u.CompletionTokens,
		"total_tokens":              total,
		"prompt_cache_hit_tokens":   u.CacheHit,
		"prompt_cache_miss_tokens":  miss,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheHit},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
	}
}

func (st *streamer) envelope(choices []choice, usage any) []byte {
	e := envelope{
		ID:                "chatcmpl-" + strconv.Itoa(st.seq),
		Object:            "chat.completion.chunk",
		Created:           created,
		Model:             st.req.Model,
		SystemFingerprint: "fp_openaitest",
		Usage:             usage,
		Obfuscation:       "x1",
	}
	switch {
	case choices == nil:
		e.Choices = json.RawMessage("null")
	default:
		e.Choices, _ = json.Marshal(choices)
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic("openaitest: " + err.Error())
	}
	return b
}

func (st *streamer) delta(d map[string]any, finish any) []choice {
	return []choice{{Index: 0, Delta: d, FinishReason: finish}}
}

// fragments cuts a tool call's arguments into wire fragments.
func fragments(tc ToolCall) []any {
	if tc.Chunks != nil {
		out := make([]any, len(tc.Chunks))
		for i, c := range tc.Chunks {
			out[i] = verbatim(c)
		}
		return out
	}
	var out []any
	prev := 0
	for _, at := range tc.Split {
		if at <= prev || at >= len(tc.Arguments) {
			continue
		}
		out = append(out, rawArg(tc.Arguments[prev:at]))
		prev = at
	}
	return append(out, rawArg(tc.Arguments[prev:]))
}

func (tc ToolCall) head(pos int, args any, withName bool) map[string]any {
	m := map[string]any{}
	if !tc.NoIndex {
		idx := pos
		if tc.Index != nil {
			idx = *tc.Index
		}
		m["index"] = idx
	}
	fn := map[string]any{"arguments": args}
	if withName {
		if tc.ID != "" {
			if tc.NumericID {
				m["id"] = json.Number(tc.ID)
			} else {
				m["id"] = tc.ID
			}
		}
		m["type"] = "function"
	}
	if withName || tc.RepeatName {
		fn["name"] = tc.Name
	}
	m["function"] = fn
	return m
}

// deltas returns the deltas of the reply's content, in stream order.
func (st *streamer) deltas() []map[string]any {
	rep := st.rep
	field := st.reasoningField()
	out := []map[string]any{{"role": "assistant", "content": ""}}
	for _, r := range rep.Reasoning {
		out = append(out, map[string]any{field: r, "content": nil})
	}
	for _, t := range rep.Text {
		d := map[string]any{"content": t}
		if len(rep.Reasoning) > 0 {
			d[field] = nil
		}
		out = append(out, d)
	}
	one := func(call map[string]any) map[string]any {
		return map[string]any{"tool_calls": []any{call}}
	}
	switch rep.ToolLayout {
	case Whole:
		for _, tc := range rep.ToolCalls {
			if tc.Index == nil {
				tc.Index = new(int)
			}
			out = append(out, one(tc.head(0, rawArg(tc.Arguments), true)))
		}
	case Interleaved:
		frags := make([][]any, len(rep.ToolCalls))
		for i, tc := range rep.ToolCalls {
			out = append(out, one(tc.head(i, "", true)))
			frags[i] = fragments(tc)
		}
		for more := true; more; {
			more = false
			for i, tc := range rep.ToolCalls {
				if len(frags[i]) == 0 {
					continue
				}
				out = append(out, one(tc.head(i, frags[i][0], false)))
				frags[i] = frags[i][1:]
				more = true
			}
		}
	default:
		for i, tc := range rep.ToolCalls {
			out = append(out, one(tc.head(i, "", true)))
			for _, f := range fragments(tc) {
				out = append(out, one(tc.head(i, f, false)))
			}
		}
	}
	return out
}

// payloads returns every data event of the stream but "[DONE]".
func (st *streamer) payloads() [][]byte {
	rep := st.rep
	u := st.usage()
	deltas := st.deltas()
	var out [][]byte
	for i, d := range deltas {
		var usage any
		if rep.UsageAt == UsageEveryChunk {
			partial := u
			partial.CompletionTokens = int64(i)
			partial.TotalTokens = 0
			usage = usageJSON(partial)
		}
		out = append(out, st.envelope(st.delta(d, nil), usage))
	}
	if rep.ErrorEvent {
		e := rep.Error
		if e == nil {
			e = &Error{Message: "The server had an error while processing your request", Type: "server_error", Code: "server_error"}
		}
		b, _ := json.Marshal(map[string]any{"error": e})
		return append(out, b)
	}
	if rep.NoFinish || rep.Flood != nil {
		return out
	}
	var usage any
	if rep.UsageAt == UsageOnFinish || rep.UsageAt == UsageEveryChunk {
		usage = usageJSON(u)
	}
	out = append(out, st.envelope(st.delta(map[string]any{}, st.finish()), usage))
	if st.req.IncludeUsage() {
		switch rep.UsageAt {
		case UsageChunk:
			out = append(out, st.envelope([]choice{}, usageJSON(u)))
		case UsageChoicesNull:
			out = append(out, st.envelope(nil, usageJSON(u)))
		}
	}
	return out
}

func (st *streamer) frame(payload []byte, n int) []byte {
	var b bytes.Buffer
	if st.rep.SSEFields {
		b.WriteString("event: message" + st.nl + "id: " + strconv.Itoa(n) + st.nl + "retry: 3000" + st.nl)
	}
	prefix := "data: "
	if st.rep.NoSpace {
		prefix = "data:"
	}
	lines := [][]byte{payload}
	if st.rep.MultiLine {
		var ind bytes.Buffer
		if json.Indent(&ind, payload, "", " ") == nil {
			lines = bytes.Split(ind.Bytes(), []byte("\n"))
		}
	}
	for _, l := range lines {
		b.WriteString(prefix)
		b.Write(l)
		b.WriteString(st.nl)
	}
	b.WriteString(st.nl)
	return b.Bytes()
}

// write sends p and flushes; false when the client is gone.
func (st *streamer) write(p []byte) bool {
	pieces := [][]byte{p}
	if st.rep.SplitWrites && len(p) >= 3 {
		a, b := len(p)/3, 2*len(p)/3
		pieces = [][]byte{p[:a], p[a:b], p[b:]}
	}
	rc := http.NewResponseController(st.w)
	for _, piece := range pieces {
		n, err := st.w.Write(piece)
		st.written += int64(n)
		if f := st.rep.Flood; f != nil && f.Sent != nil {
			f.Sent.Add(int64(n))
		}
		if err != nil {
			return false
		}
		if rc.Flush() != nil {
			return false
		}
	}
	return true
}

func (st *streamer) keepAlive() bool {
	c := st.rep.Comment
	if c == "" {
		c = ": keep-alive"
	}
	return st.write([]byte(c + st.nl + st.nl))
}

func (st *streamer) keepAlives() bool {
	for range st.rep.KeepAlives {
		if !st.keepAlive() || !st.write([]byte(st.nl)) {
			return false
		}
	}
	return true
}

// wait waits for hold to close and then d to pass, pinging every interval
// when it is positive; false when the client or the server went away.
func (st *streamer) wait(hold <-chan struct{}, d, interval time.Duration) bool {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	if hold != nil && !pingUntil(st, hold, tick) {
		return false
	}
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	return pingUntil(st, timer.C, tick)
}

// pingUntil waits for done to yield or close, pinging at every tick; false
// when the client or the server went away first.
func pingUntil[T any](st *streamer, done <-chan T, tick <-chan time.Time) bool {
	for {
		select {
		case <-done:
			return true
		case <-tick:
			if !st.keepAlive() {
				return false
			}
		case <-st.r.Context().Done():
			return false
		case <-st.s.closing:
			return false
		}
	}
}

func (st *streamer) writeStream() {
	rep := st.rep
	st.nl = "\n"
	if rep.CRLF {
		st.nl = "\r\n"
	}
	if rep.HoldHeaders && !st.wait(rep.Hold, rep.FirstDelay, 0) {
		return
	}
	h := st.w.Header()
	for k, v := range rep.Header {
		h[k] = v
	}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
	if http.NewResponseController(st.w).Flush() != nil || !st.keepAlives() {
		return
	}
	if !rep.HoldHeaders && !st.wait(rep.Hold, rep.FirstDelay, rep.KeepAliveInterval) {
		return
	}
	if rep.Raw != "" {
		st.write([]byte(rep.Raw))
		if rep.Disconnect {
			st.hangUp()
		}
		return
	}
	for i, p := range st.payloads() {
		if rep.Disconnect && i == rep.DisconnectAfter {
			st.hangUp()
			return
		}
		if i > 0 && rep.Delay > 0 && !st.wait(nil, rep.Delay, 0) {
			return
		}
		if !st.write(st.frame(p, i+1)) || !st.keepAlives() {
			return
		}
	}
	if rep.Flood != nil {
		st.flood()
		return
	}
	if rep.Disconnect {
		st.hangUp()
		return
	}
	if rep.ErrorEvent {
		return
	}
	if !rep.NoDone && !st.write(st.frame([]byte("[DONE]"), 0)) {
		return
	}
	if rep.KeepAliveForever {
		every := rep.KeepAliveInterval
		if every <= 0 {
			every = 10 * time.Millisecond
		}
		for st.wait(nil, every, 0) && st.keepAlive() {
		}
	}
}

// hangUp closes the connection under the response: the client sees the
// stream break in the middle, not end.
func (st *streamer) hangUp() {
	conn, _, err := http.NewResponseController(st.w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func (st *streamer) writeJSON() {
	rep := st.rep
	if rep.Flood != nil {
		st.w.Header().Set("Content-Type", "application/json")
		st.w.WriteHeader(http.StatusOK)
		st.floodJSON()
		return
	}
	msg := map[string]any{"role": "assistant", "content": joined(rep.Text)}
	if rep.Reasoning != nil {
		msg[st.reasoningField()] = joined(rep.Reasoning)
	}
	if len(rep.ToolCalls) > 0 {
		var calls []any
		for _, tc := range rep.ToolCalls {
			c := map[string]any{"type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
			if tc.ID != "" {
				c["id"] = tc.ID
			}
			calls = append(calls, c)
		}
		msg["tool_calls"] = calls
	}
	body := map[string]any{
		"id":      "chatcmpl-" + strconv.Itoa(st.seq),
		"object":  "chat.completion",
		"created": created,
		"model":   st.req.Model,
		"choices": []choice{{Index: 0, Message: msg, FinishReason: st.finish()}},
	}
	if rep.UsageAt != UsageNone {
		body["usage"] = usageJSON(st.usage())
	}
	b, _ := json.Marshal(body)
	h := st.w.Header()
	for k, v := range rep.Header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	st.w.WriteHeader(http.StatusOK)
	// DeepSeek keeps a queued non-streaming request alive with blank lines.
	for range rep.KeepAlives {
		if !st.write([]byte("\n")) {
			return
		}
	}
	st.write(b)
}

func joined(parts []string) string {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}
