// envelope.go: the few fields of a JSON-RPC message the Streamable HTTP
// transport routes by, read without decoding the rest.

package remote

import (
	"bytes"
	"unicode/utf8"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// Header names and media types of the RFD.
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
	mimeJSON           = "application/json"
	mimeEventStream    = "text/event-stream"
)

// Methods the transport looks at.
const (
	methodInitialize    = "initialize"
	methodSessionNew    = "session/new"
	methodSessionLoad   = "session/load"
	methodSessionResume = "session/resume"
)

// sessionScoped are the client methods that must carry Acp-Session-Id.
var sessionScoped = map[string]bool{
	"session/cancel": true, "session/close": true, "session/delete": true, "session/fork": true,
	methodSessionLoad: true, "session/prompt": true, methodSessionResume: true,
	"session/set_config_option": true, "session/set_mode": true, "session/set_model": true,
}

// envelope is what routing needs of one message.
type envelope struct {
	id        []byte // raw id; nil when absent
	method    string // "" for a response
	hasMethod bool
	// paramsSession is params.sessionId of a request or notification;
	// resultSession is result.sessionId of a response.
	paramsSession, resultSession string
}

// isResponse reports whether the message answers a request.
func (e *envelope) isResponse() bool { return !e.hasMethod && e.id != nil }

// isRequest reports whether the message expects an answer.
func (e *envelope) isRequest() bool { return e.hasMethod && e.id != nil && string(e.id) != "null" }

// echoable reports whether the id is one an agent answers with: a string
// or an integer in valid UTF-8 (JSON-RPC's; acp/rpc answers any other id
// with null).
func (e *envelope) echoable() bool {
	return len(e.id) > 0 && (e.id[0] == '"' || jsontext.IsInteger(e.id)) && utf8.Valid(e.id)
}

// key identifies the message's id across directions ("" when it has none):
// the raw text, so 7 and "7" stay distinct.
func (e *envelope) key() string {
	if e.id == nil {
		return ""
	}
	return string(e.id)
}

// parseEnvelope reads msg's envelope. It fails when msg is not a JSON
// object; members it does not route by are skipped, not checked.
func parseEnvelope(msg []byte) (envelope, error) {
	var e envelope
	err := jsontext.ScanObject(msg, func(key, val []byte) bool {
		switch {
		case jsontext.KeyIs(key, "id"):
			e.id = bytes.TrimSpace(val)
		case jsontext.KeyIs(key, "method"):
			e.method, _ = jsontext.String(val)
			e.hasMethod = true
		case jsontext.KeyIs(key, "params"):
			e.paramsSession = sessionIDOf(val)
		case jsontext.KeyIs(key, "result"):
			e.resultSession = sessionIDOf(val)
		}
		return true
	})
	return e, err
}

// sessionIDOf returns the string member sessionId of a JSON object, or "".
func sessionIDOf(obj []byte) string {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return ""
	}
	var id string
	_ = jsontext.ScanObject(obj, func(key, val []byte) bool {
		if jsontext.KeyIs(key, "sessionId") {
			id, _ = jsontext.String(val)
			return false
		}
		return true
	})
	return id
}

// oneLine turns the CR and LF bytes of a JSON text into spaces, in place:
// in valid JSON they can only be white space between tokens.
func oneLine(b []byte) []byte {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return b
}

// writeLines is the Write of a stream whose writer speaks in lines: it cuts
// p at newlines and sends each non-empty line as one message. *line holds
// the start of a line not yet ended, for the next Write. The count is of
// the bytes consumed before a failed send.
func writeLines(line *[]byte, p []byte, send func(msg []byte) error) (int, error) {
	total := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			*line = append(*line, p...)
			break
		}
		msg := append(*line, p[:i]...)
		*line = nil
		p = p[i+1:]
		if len(msg) == 0 {
			continue
		}
		if err := send(msg); err != nil {
			return total - len(p), err
		}
	}
	return total, nil
}
