// fastpath.go: a hand-written encoder for the hottest notification — a
// streamed text chunk — producing exactly the bytes of the generic path.

package acp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// appendTextChunkNotification appends n encoded as its generic encoding
// would, when n is a message or thought chunk holding a plain text block
// (no annotations, no _meta anywhere); otherwise it reports false and
// appends nothing.
func appendTextChunkNotification(dst []byte, n *SessionNotification) ([]byte, bool) {
	if n.Meta != nil {
		return dst, false
	}
	var tag string
	var chunk *ContentChunk
	switch u := n.Update.(type) {
	case *AgentMessageChunk:
		tag, chunk = UpdateAgentMessageChunk, (*ContentChunk)(u)
	case *AgentThoughtChunk:
		tag, chunk = UpdateAgentThoughtChunk, (*ContentChunk)(u)
	case *UserMessageChunk:
		tag, chunk = UpdateUserMessageChunk, (*ContentChunk)(u)
	default:
		return dst, false
	}
	text, ok := chunk.Content.(*TextContent)
	if !ok || text == nil || text.Annotations != nil || text.Meta != nil || chunk.Meta != nil {
		return dst, false
	}
	dst = append(dst, `{"sessionId":`...)
	dst = appendJSONString(dst, string(n.SessionID))
	dst = append(dst, `,"update":{"sessionUpdate":"`...)
	dst = append(dst, tag...)
	dst = append(dst, `","content":{"type":"text","text":`...)
	dst = appendJSONString(dst, text.Text)
	dst = append(dst, '}')
	if chunk.MessageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = appendJSONString(dst, string(chunk.MessageID))
	}
	return append(dst, '}', '}'), true
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json does
// with HTML escaping off: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029
// are escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// MarshalSessionNotification encodes n exactly as the connection writes
// it (the text-chunk fast path when it applies, no HTML escaping), so a
// caller that also records the notification encodes it once and writes
// the bytes with AgentSideConn.SessionUpdateRaw.
func MarshalSessionNotification(n *SessionNotification) ([]byte, error) {
	if b, ok := appendTextChunkNotification(nil, n); ok {
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
