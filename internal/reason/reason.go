// This file implements the rule.

package reason

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Of returns the human reason of an error with this code, message and
// data, for a person or a model to read: the reason the peer put in data,
// whichever field carries it, else message. Peers spell it differently:
// data itself as a string, or a member "reason" (dshd), "details" (the
// TypeScript SDK, acpx), "error" (the Go SDK) or "message" of a data
// object, searched in that order, a member that is itself an object
// searched the same way. A "field" member beside the reason is named
// before it ("cwd: must be absolute"). The reason replaces a message that
// only names the code ("Internal error"); a message that says more keeps
// it and the reason follows. With neither, it names the code.
//
// data may be raw JSON (a peer's error), or any Go value that encodes to
// JSON (dshd's own: maps, strings, structs).
func Of(code int, message string, data any) string {
	msg := strings.TrimSpace(message)
	r := in(plain(data), 0)
	switch {
	case r == "" && msg == "":
		return fmt.Sprintf("error %d", code)
	case r == "":
		return msg
	case msg == "" || codeMessage(msg) || strings.Contains(r, msg):
		return r
	case strings.Contains(msg, r):
		return msg
	}
	return msg + ": " + r
}

// keys are the members that carry a reason, in the order searched.
var keys = []string{"reason", "details", "error", "message"}

// in finds the reason in decoded JSON data (see [Of]).
func in(v any, depth int) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case map[string]any:
		if depth > 3 {
			return ""
		}
		for _, k := range keys {
			r := in(v[k], depth+1)
			if r == "" {
				continue
			}
			if f, ok := v["field"].(string); ok && f != "" && !strings.HasPrefix(r, f) {
				r = f + ": " + r
			}
			return r
		}
	}
	return ""
}

// plain returns d as decoded JSON (strings, maps, slices, numbers),
// whatever Go value holds it.
func plain(d any) any {
	switch d := d.(type) {
	case nil, string, map[string]any:
		return d
	case json.RawMessage:
		var v any
		if json.Unmarshal(d, &v) != nil {
			return nil
		}
		return v
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return plain(json.RawMessage(b))
}

// codeMessages are the messages that only name an error code: the
// standard ones of JSON-RPC and ACP v1 §21, and what servers commonly
// put instead.
var codeMessages = []string{
	"Parse error", "Invalid request", "Method not found", "Invalid params",
	"Internal error", "Request cancelled", "Authentication required",
	"Resource not found", "Internal server error", "Server error",
}

// codeMessage reports whether msg, in any case, only names an error code.
func codeMessage(msg string) bool {
	for _, m := range codeMessages {
		if strings.EqualFold(msg, m) {
			return true
		}
	}
	return false
}
