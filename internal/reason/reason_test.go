package reason

import (
	"encoding/json"
	"testing"
)

func TestOf_KeepsThePeersReasonWhicheverFieldCarriesIt(t *testing.T) {
	const internal, invalid = -32603, -32602
	for _, tc := range []struct {
		name string
		code int
		msg  string
		data any
		want string
	}{
		{"data as a string", internal, "Internal error", "disk quota exceeded", "disk quota exceeded"},
		{"data.reason (dshd)", internal, "Internal error", map[string]any{"reason": "disk quota exceeded"}, "disk quota exceeded"},
		{"data.details (the TS SDK, acpx)", internal, "Internal error", json.RawMessage(`{"details":"disk quota exceeded"}`), "disk quota exceeded"},
		{"data.error (the Go SDK)", internal, "Internal error", json.RawMessage(`{"error":"disk quota exceeded"}`), "disk quota exceeded"},
		{"data.message", internal, "Internal error", json.RawMessage(`{"message":"disk quota exceeded"}`), "disk quota exceeded"},
		{"data as a raw string", internal, "Internal error", json.RawMessage(`"disk quota exceeded"`), "disk quota exceeded"},
		{"a nested error object", internal, "Internal error", json.RawMessage(`{"error":{"message":"disk quota exceeded","code":"EDQUOT"}}`), "disk quota exceeded"},
		{"a Go value of data", internal, "Internal error", struct {
			Details string `json:"details"`
		}{"disk quota exceeded"}, "disk quota exceeded"},
		{"reason wins over message", internal, "Internal error", map[string]any{"message": "generic", "reason": "disk quota exceeded"}, "disk quota exceeded"},
		{"the field is named", invalid, "Invalid params", map[string]any{"field": "cwd", "reason": "must be absolute"}, "cwd: must be absolute"},
		{"no data: the message", internal, "Internal error", nil, "Internal error"},
		{"data without a reason: the message", -32601, "Method not found", map[string]any{"method": "x/y"}, "Method not found"},
		{"a message that says more keeps it", internal, "The turn failed", map[string]any{"reason": "the model server is down"}, "The turn failed: the model server is down"},
		{"a message holding the reason is not repeated", internal, "The turn failed: the model server is down", map[string]any{"reason": "the model server is down"}, "The turn failed: the model server is down"},
		{"a server's own code message is replaced too", 500, "internal server error", map[string]any{"details": "upstream timed out"}, "upstream timed out"},
		{"data that is not JSON: the message", internal, "The turn failed", json.RawMessage(`{`), "The turn failed"},
		{"nothing at all", -32099, "", nil, "error -32099"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.code, tc.msg, tc.data); got != tc.want {
				t.Errorf("Of(%d, %q, %v) = %q, want %q", tc.code, tc.msg, tc.data, got, tc.want)
			}
		})
	}
}
