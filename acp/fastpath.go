// fastpath.go: a hand-written encoder for the hottest notification — a
// streamed text chunk — producing exactly the bytes of the generic path.

package acp

import (
	"bytes"
	"slices"

	"github.com/dshd/dshd/acp/internal/jsontext"
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
	// One allocation for a large text, instead of the repeated growth of
	// appending it (escapes may still add a little).
	dst = slices.Grow(dst, len(text.Text)+len(n.SessionID)+len(chunk.MessageID)+96)
	dst = append(dst, `{"sessionId":`...)
	dst = jsontext.AppendString(dst, string(n.SessionID))
	dst = append(dst, `,"update":{"sessionUpdate":"`...)
	dst = append(dst, tag...)
	dst = append(dst, `","content":{"type":"text","text":`...)
	dst = jsontext.AppendString(dst, text.Text)
	dst = append(dst, '}')
	if chunk.MessageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = jsontext.AppendString(dst, string(chunk.MessageID))
	}
	return append(dst, '}', '}'), true
}

// MarshalSessionNotification encodes n exactly as a connection writes it
// (the text-chunk fast path when it applies, no HTML escaping), so a
// caller that also records the notification encodes it once and writes
// the bytes raw (rpc.AgentSideConn.SessionUpdateRaw).
func MarshalSessionNotification(n *SessionNotification) ([]byte, error) {
	return AppendSessionNotification(nil, n)
}

// AppendSessionNotification appends n encoded as MarshalSessionNotification
// encodes it.
func AppendSessionNotification(dst []byte, n *SessionNotification) ([]byte, error) {
	if b, ok := appendTextChunkNotification(dst, n); ok {
		return b, nil
	}
	e := encPool.Get().(*pooledEncoder)
	defer putEncoder(e)
	e.buf.Reset()
	if err := e.enc.Encode(n); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'})...), nil
}
