// A reflection-free decoder for stream chunks. A stream is hundreds of
// small chunks, and encoding/json's reflection and allocations were most
// of the parse time; this walks only the fields dshd reads and skips the
// rest. Anything it does not expect makes it give up, and decodeChunk falls
// back to encoding/json, so its result is always encoding/json's.

package openai

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

type fastScanner struct {
	b []byte
	i int
}

func (s *fastScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte, or 0 at the end.
func (s *fastScanner) next() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *fastScanner) eat(c byte) bool {
	if s.next() == c {
		s.i++
		return true
	}
	return false
}

// rawString returns a string token including its quotes, and whether it
// holds escapes. The cursor must be on the opening quote.
func (s *fastScanner) rawString() (raw []byte, escaped, ok bool) {
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], escaped, true
		case c == '\\':
			escaped = true
			if !s.escape() {
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			s.i++
		}
	}
	return nil, false, false
}

// escape passes over one escape sequence, checking it.
func (s *fastScanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		s.i += 6
		return true
	}
	return false
}

// unquote decodes a string token; plain ASCII or valid UTF-8 without
// escapes skips encoding/json entirely.
func unquote(raw []byte, escaped bool) (string, bool) {
	inner := raw[1 : len(raw)-1]
	if !escaped && utf8.Valid(inner) {
		return string(inner), true
	}
	var out string
	if json.Unmarshal(raw, &out) != nil {
		return "", false
	}
	return out, true
}

// str reads a string value: (value, isString, ok). null and other types
// give isString false and are skipped.
func (s *fastScanner) str() (string, bool, bool) {
	if s.next() != '"' {
		return "", false, s.skip()
	}
	raw, esc, ok := s.rawString()
	if !ok {
		return "", false, false
	}
	v, ok := unquote(raw, esc)
	return v, ok, ok
}

// raw returns a copy of the next value's bytes.
func (s *fastScanner) raw() ([]byte, bool) {
	s.ws()
	start := s.i
	if !s.skip() {
		return nil, false
	}
	return append([]byte(nil), s.b[start:s.i]...), true
}

// integer reads a number into an int64; other values are skipped and
// reported as absent, as encoding/json does with a type mismatch.
func (s *fastScanner) integer() (int64, bool, bool) {
	s.ws()
	start := s.i
	if !s.skip() {
		return 0, false, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil, true
}

// skip passes over one value of any kind.
func (s *fastScanner) skip() bool {
	switch c := s.next(); {
	case c == '"':
		_, _, ok := s.rawString()
		return ok
	case c == '{':
		s.i++
		if s.eat('}') {
			return true
		}
		for {
			if s.next() != '"' {
				return false
			}
			if _, _, ok := s.rawString(); !ok || !s.eat(':') || !s.skip() {
				return false
			}
			if s.eat('}') {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	case c == '[':
		s.i++
		if s.eat(']') {
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			if s.eat(']') {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		for s.i < len(s.b) && strings.IndexByte("+-.eE0123456789", s.b[s.i]) >= 0 {
			s.i++
		}
		return json.Valid(s.b[start:s.i])
	}
	return false
}

func (s *fastScanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

func (s *fastScanner) isNull() bool {
	if s.next() == 'n' {
		return s.literal("null")
	}
	return false
}

// field advances to the next known key of an object whose '{' was eaten,
// skipping unknown fields. It returns the key's position in known with the
// cursor on its value, or end at the closing brace. Keys that differ from a
// known one only by case make it fail, since encoding/json would match them.
func (s *fastScanner) field(first bool, known []string) (idx int, end, ok bool) {
	for {
		if s.eat('}') {
			return 0, true, true
		}
		if !first && !s.eat(',') {
			return 0, false, false
		}
		first = false
		if s.next() != '"' {
			return 0, false, false
		}
		raw, esc, ok := s.rawString()
		if !ok || esc || !s.eat(':') {
			return 0, false, false
		}
		key := raw[1 : len(raw)-1]
		for i, k := range known {
			if string(key) == k {
				return i, false, true
			}
			if foldEqual(key, k) {
				return 0, false, false
			}
		}
		if !s.skip() {
			return 0, false, false
		}
	}
}

func foldEqual(b []byte, k string) bool {
	if len(b) != len(k) {
		return false
	}
	for i := range len(b) {
		x, y := b[i]|0x20, k[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// elem advances to the next element of an array whose '[' was eaten, or
// reports end at the closing bracket.
func (s *fastScanner) elem(first bool) (end, ok bool) {
	if s.eat(']') {
		return true, true
	}
	if !first && !s.eat(',') {
		return false, false
	}
	return false, true
}

var (
	chunkKeys    = []string{"choices", "usage", "error"}
	choiceKeys   = []string{"index", "delta", "message", "finish_reason"}
	deltaKeys    = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	toolKeys     = []string{"index", "id", "function"}
	functionKeys = []string{"name", "arguments"}
	usageKeys    = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
		"prompt_tokens_details", "completion_tokens_details"}
	cachedKeys    = []string{"cached_tokens"}
	reasoningKeys = []string{"reasoning_tokens"}
)

// fastDecode fills c from data and reports whether it could; on false c is
// in an undefined state and the caller decodes again with encoding/json.
func fastDecode(data []byte, c *wireChunk) bool {
	s := &fastScanner{b: data}
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, chunkKeys)
		if !ok {
			return false
		}
		if end {
			break
		}
		switch idx {
		case 0: // choices
			c.Choices = nil
			if s.isNull() {
				continue
			}
			if !s.eat('[') {
				return false // a type error for encoding/json to report
			}
			c.Choices = make([]wireChoice, 0, 1)
			for f := true; ; f = false {
				end, ok := s.elem(f)
				if !ok {
					return false
				}
				if end {
					break
				}
				c.Choices = append(c.Choices, wireChoice{})
				if !s.choice(&c.Choices[len(c.Choices)-1]) {
					return false
				}
			}
		case 1: // usage
			if s.isNull() {
				c.Usage = nil
				continue
			}
			if c.Usage == nil {
				c.Usage = &wireUsage{}
			}
			if !s.usage(c.Usage) {
				return false
			}
		case 2: // error
			raw, ok := s.raw()
			if !ok {
				return false
			}
			c.Error = raw
		}
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *fastScanner) choice(ch *wireChoice) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, choiceKeys)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch idx {
		case 0: // index
			n, isInt, ok := s.integer()
			if !ok || (isInt && n != int64(int(n))) {
				return false
			}
			if isInt {
				ch.Index = int(n)
			}
		case 1, 2: // delta, message
			d := &ch.Delta
			if idx == 2 {
				d = &ch.Message
			}
			if s.isNull() {
				continue
			}
			if !s.delta(d) {
				return false
			}
		case 3: // finish_reason
			if !s.optString(&ch.FinishReason) {
				return false
			}
		}
	}
}

// optString reads a string or null into a *string.
func (s *fastScanner) optString(dst **string) bool {
	if s.isNull() {
		*dst = nil
		return true
	}
	if s.next() != '"' {
		return false
	}
	raw, esc, ok := s.rawString()
	if !ok {
		return false
	}
	v, ok := unquote(raw, esc)
	if !ok {
		return false
	}
	*dst = &v
	return true
}

func (s *fastScanner) delta(d *wireDelta) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, deltaKeys)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch idx {
		case 0:
			ok = s.optString(&d.Content)
		case 1:
			ok = s.optString(&d.ReasoningContent)
		case 2:
			d.Reasoning, ok = s.raw()
		case 3: // tool_calls
			d.ToolCalls = nil
			if s.isNull() {
				continue
			}
			if !s.eat('[') {
				return false
			}
			d.ToolCalls = []wireToolCallDelta{}
			for f := true; ; f = false {
				end, ok := s.elem(f)
				if !ok {
					return false
				}
				if end {
					break
				}
				d.ToolCalls = append(d.ToolCalls, wireToolCallDelta{})
				if !s.toolCall(&d.ToolCalls[len(d.ToolCalls)-1]) {
					return false
				}
			}
		}
		if !ok {
			return false
		}
	}
}

func (s *fastScanner) toolCall(t *wireToolCallDelta) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, toolKeys)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch idx {
		case 0: // index
			if s.isNull() {
				t.Index = nil
				continue
			}
			n, isInt, ok := s.integer()
			if !ok || !isInt || n != int64(int(n)) {
				return false
			}
			i := int(n)
			t.Index = &i
		case 1: // id
			if t.ID, ok = s.raw(); !ok {
				return false
			}
		case 2: // function
			if s.isNull() {
				continue
			}
			if !s.eat('{') {
				return false
			}
			for f := true; ; f = false {
				idx, end, ok := s.field(f, functionKeys)
				if !ok {
					return false
				}
				if end {
					break
				}
				if idx == 0 {
					ok = s.optString(&t.Function.Name)
				} else {
					t.Function.Arguments, ok = s.raw()
				}
				if !ok {
					return false
				}
			}
		}
	}
}

func (s *fastScanner) count(dst *int64) bool {
	n, isInt, ok := s.integer()
	if !ok || !isInt {
		return false
	}
	*dst = n
	return true
}

// counts reads an object of known integer fields.
func (s *fastScanner) counts(keys []string, dst ...*int64) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, keys)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if !s.count(dst[idx]) {
			return false
		}
	}
}

func (s *fastScanner) usage(u *wireUsage) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		idx, end, ok := s.field(first, usageKeys)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch idx {
		case 0:
			ok = s.count(&u.PromptTokens)
		case 1:
			ok = s.count(&u.CompletionTokens)
		case 2:
			ok = s.count(&u.TotalTokens)
		case 3:
			ok = s.count(&u.PromptCacheHitTokens)
		case 4:
			if s.isNull() {
				u.PromptTokensDetails = nil
				continue
			}
			if u.PromptTokensDetails == nil {
				u.PromptTokensDetails = &struct {
					CachedTokens int64 `json:"cached_tokens"`
				}{}
			}
			ok = s.counts(cachedKeys, &u.PromptTokensDetails.CachedTokens)
		case 5:
			if s.isNull() {
				u.CompletionTokensDetails = nil
				continue
			}
			if u.CompletionTokensDetails == nil {
				u.CompletionTokensDetails = &struct {
					ReasoningTokens int64 `json:"reasoning_tokens"`
				}{}
			}
			ok = s.counts(reasoningKeys, &u.CompletionTokensDetails.ReasoningTokens)
		}
		if !ok {
			return false
		}
	}
}
