// This file decodes JSON-RPC envelopes and offers small helpers to read
// fields out of raw JSON without a typed model, so cases can inspect
// exactly what was on the wire.

package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RPCError is a JSON-RPC error object as received.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error renders the code, message and data.
func (e *RPCError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("rpc error %d %q data=%s", e.Code, e.Message, clip(e.Data, 200))
	}
	return fmt.Sprintf("rpc error %d %q", e.Code, e.Message)
}

// Msg is one decoded JSON-RPC message. ID is the raw id (nil when the
// member is absent, `null` when it is null) so its JSON type survives.
type Msg struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Msg) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Msg) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response (an id, no method).
func (m *Msg) IsResponse() bool { return m.Method == "" && m.ID != nil }

// IDKey is the id in a canonical text form, for map keys ("" when absent).
func (m *Msg) IDKey() string { return idKey(m.ID) }

// SessionID returns params.sessionId, or "".
func (m *Msg) SessionID() string { return getString(m.Params, "sessionId") }

// UpdateKind returns params.update.sessionUpdate of a session/update, or "".
func (m *Msg) UpdateKind() string {
	if m.Method != "session/update" {
		return ""
	}
	return getString(m.Params, "update", "sessionUpdate")
}

// Update returns params.update of a session/update.
func (m *Msg) Update() json.RawMessage { return get(m.Params, "update") }

func idKey(id json.RawMessage) string {
	if id == nil {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// parseMsg decodes one line into a Msg and checks the JSON-RPC 2.0
// envelope rules of acp-v1 §3; a non-nil error says what is wrong.
func parseMsg(line []byte) (*Msg, error) {
	var env map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	if env == nil {
		return nil, errors.New("not a JSON object")
	}
	m := &Msg{}
	if raw, ok := env["id"]; ok {
		m.ID = raw
		if !validID(raw) {
			return m, fmt.Errorf("id %s is not a string, an integer or null", clip(raw, 40))
		}
	}
	var v string
	if raw, ok := env["jsonrpc"]; !ok || json.Unmarshal(raw, &v) != nil || v != "2.0" {
		return m, errors.New(`"jsonrpc" is not "2.0"`)
	}
	if raw, ok := env["method"]; ok {
		if json.Unmarshal(raw, &m.Method) != nil || m.Method == "" {
			return m, errors.New(`"method" is not a non-empty string`)
		}
	}
	m.Params = env["params"]
	res, hasResult := env["result"]
	errRaw, hasError := env["error"]
	if m.Method != "" {
		if hasResult || hasError {
			return m, errors.New("a request or notification carries result or error")
		}
		if m.Params != nil && !isObject(m.Params) && !isNull(m.Params) {
			return m, errors.New(`"params" is not an object`)
		}
		return m, nil
	}
	if m.ID == nil {
		return m, errors.New("neither a method nor an id")
	}
	if hasResult == hasError {
		return m, errors.New("a response must carry exactly one of result and error")
	}
	if hasResult {
		m.Result = res
		return m, nil
	}
	var e struct {
		Code    *json.Number    `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(errRaw, &e); err != nil || e.Code == nil || e.Message == nil {
		return m, errors.New("error object lacks an integer code or a string message")
	}
	code, err := strconv.ParseInt(e.Code.String(), 10, 32)
	if err != nil {
		return m, fmt.Errorf("error code %s is not an int32", e.Code)
	}
	m.Error = &RPCError{Code: code, Message: *e.Message, Data: e.Data}
	return m, nil
}

func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return true
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// get walks raw JSON by object keys and array indexes (as decimal strings)
// and returns the value found, or nil.
func get(raw json.RawMessage, path ...string) json.RawMessage {
	cur := raw
	for _, p := range path {
		if len(cur) == 0 {
			return nil
		}
		cur = bytes.TrimSpace(cur)
		switch {
		case len(cur) > 0 && cur[0] == '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(cur, &m) != nil {
				return nil
			}
			v, ok := m[p]
			if !ok {
				return nil
			}
			cur = v
		case len(cur) > 0 && cur[0] == '[':
			var a []json.RawMessage
			i, err := strconv.Atoi(p)
			if json.Unmarshal(cur, &a) != nil || err != nil || i < 0 || i >= len(a) {
				return nil
			}
			cur = a[i]
		default:
			return nil
		}
	}
	return cur
}

// has reports whether the key path exists (even with a null value).
func has(raw json.RawMessage, path ...string) bool { return get(raw, path...) != nil }

func getString(raw json.RawMessage, path ...string) string {
	var s string
	if v := get(raw, path...); v != nil {
		_ = json.Unmarshal(v, &s)
	}
	return s
}

// getArray returns the elements of an array value, or nil.
func getArray(raw json.RawMessage, path ...string) []json.RawMessage {
	var a []json.RawMessage
	if v := get(raw, path...); v != nil {
		_ = json.Unmarshal(v, &a)
	}
	return a
}

// getObject returns the members of an object value, or nil.
func getObject(raw json.RawMessage, path ...string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if v := get(raw, path...); v != nil {
		_ = json.Unmarshal(v, &m)
	}
	return m
}

// truthy reports whether a capability value counts as advertised: true,
// or a non-null object (acp-v1 §4).
func truthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return string(raw) == "true" || (len(raw) > 0 && raw[0] == '{')
}

// mustJSON marshals v; it is for values the package builds itself.
func mustJSON(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("conformance: marshal %T: %v", v, err))
	}
	return b
}

// clip shortens b for messages.
func clip[T ~[]byte | ~string](b T, n int) string {
	s := string(b)
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// textOf concatenates the text of text content blocks in raw (a block or
// an array of blocks).
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var b strings.Builder
		for _, it := range getArray(raw) {
			b.WriteString(textOf(it))
		}
		return b.String()
	}
	if getString(raw, "type") == "text" {
		return getString(raw, "text")
	}
	return ""
}
