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
		return s.object(nil, nil)
	case c == '[':
		return s.array(s.skip)
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

// object reads an object, calling field for each key of known it meets,
// with the key's position in known and the cursor on the value, which field
// must consume; other members are skipped. Keys that differ from a known one
// only by case, or that are escaped while there are keys to match, make it
// fail, since encoding/json could match them.
func (s *fastScanner) object(known []string, field func(idx int) bool) bool {
	if !s.eat('{') {
		return false
	}
	for first := true; ; first = false {
		if s.eat('}') {
			return true
		}
		if !first && !s.eat(',') {
			return false
		}
		if s.next() != '"' {
			return false
		}
		raw, esc, ok := s.rawString()
		if !ok || (esc && len(known) > 0) || !s.eat(':') {
			return false
		}
		switch idx := keyIndex(known, raw[1:len(raw)-1]); {
		case idx >= 0:
			ok = field(idx)
		case idx == keyFolded:
			return false
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

// What keyIndex returns besides a key's position.
const (
	keyUnknown = -1
	keyFolded  = -2 // a known key but for case, which encoding/json would match
)

// keyIndex returns key's position in known, keyUnknown, or keyFolded.
func keyIndex(known []string, key []byte) int {
	for i, k := range known {
		if string(key) == k {
			return i
		}
		if foldEqual(key, k) {
			return keyFolded
		}
	}
	return keyUnknown
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

// array reads an array, calling elem for each element with the cursor on
// it; elem must consume the element.
func (s *fastScanner) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.eat(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// list reads an array of objects into *dst with read, as encoding/json
// fills a slice: null leaves it nil, [] makes it empty (with room for
// capHint elements).
func list[T any](s *fastScanner, dst *[]T, capHint int, read func(*T) bool) bool {
	*dst = nil
	if s.isNull() {
		return true
	}
	*dst = make([]T, 0, capHint)
	return s.array(func() bool {
		var zero T
		*dst = append(*dst, zero)
		return read(&(*dst)[len(*dst)-1])
	})
}

// pointee prepares the pointer member *dst for the value at the cursor as
// encoding/json does: null clears *dst and returns nil, there being nothing
// more to read; otherwise it returns *dst, allocated when nil, to read the
// value into.
func pointee[T any](s *fastScanner, dst **T) *T {
	if s.isNull() {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = new(T)
	}
	return *dst
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
// Each reader below fails on what it does not expect (often a type error
// for encoding/json to report).
func fastDecode(data []byte, c *wireChunk) bool {
	s := &fastScanner{b: data}
	ok := s.object(chunkKeys, func(idx int) (ok bool) {
		switch idx {
		case 0:
			return list(s, &c.Choices, 1, s.choice)
		case 1:
			u := pointee(s, &c.Usage)
			return u == nil || s.usage(u)
		default:
			c.Error, ok = s.raw()
			return ok
		}
	})
	s.ws()
	return ok && s.i == len(s.b)
}

func (s *fastScanner) choice(ch *wireChoice) bool {
	return s.object(choiceKeys, func(idx int) bool {
		switch idx {
		case 0:
			n, isInt, ok := s.integer()
			if !ok || (isInt && n != int64(int(n))) {
				return false
			}
			if isInt {
				ch.Index = int(n)
			}
			return true
		case 1:
			return s.isNull() || s.delta(&ch.Delta)
		case 2:
			return s.isNull() || s.delta(&ch.Message)
		default:
			return s.optString(&ch.FinishReason)
		}
	})
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
	return s.object(deltaKeys, func(idx int) (ok bool) {
		switch idx {
		case 0:
			return s.optString(&d.Content)
		case 1:
			return s.optString(&d.ReasoningContent)
		case 2:
			d.Reasoning, ok = s.raw()
			return ok
		default:
			return list(s, &d.ToolCalls, 0, s.toolCall)
		}
	})
}

func (s *fastScanner) toolCall(t *wireToolCallDelta) bool {
	return s.object(toolKeys, func(idx int) (ok bool) {
		switch idx {
		case 0:
			if s.isNull() {
				t.Index = nil
				return true
			}
			n, isInt, ok := s.integer()
			if !ok || !isInt || n != int64(int(n)) {
				return false
			}
			i := int(n)
			t.Index = &i
			return true
		case 1:
			t.ID, ok = s.raw()
			return ok
		default:
			return s.isNull() || s.object(functionKeys, func(idx int) (ok bool) {
				if idx == 0 {
					return s.optString(&t.Function.Name)
				}
				t.Function.Arguments, ok = s.raw()
				return ok
			})
		}
	})
}

func (s *fastScanner) count(dst *int64) bool {
	n, isInt, ok := s.integer()
	if !ok || !isInt {
		return false
	}
	*dst = n
	return true
}

func (s *fastScanner) usage(u *wireUsage) bool {
	return s.object(usageKeys, func(idx int) bool {
		switch idx {
		case 0:
			return s.count(&u.PromptTokens)
		case 1:
			return s.count(&u.CompletionTokens)
		case 2:
			return s.count(&u.TotalTokens)
		case 3:
			return s.count(&u.PromptCacheHitTokens)
		case 4:
			d := pointee(s, &u.PromptTokensDetails)
			return d == nil || s.object(cachedKeys, func(int) bool { return s.count(&d.CachedTokens) })
		default:
			d := pointee(s, &u.CompletionTokensDetails)
			return d == nil || s.object(reasoningKeys, func(int) bool { return s.count(&d.ReasoningTokens) })
		}
	})
}
