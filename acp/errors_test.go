package acp

import (
	"encoding/json"
	"testing"
)

func TestReason_KeepsThePeersReasonWhicheverFieldCarriesIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"data as a string", ErrInternal.WithData("disk quota exceeded"), "disk quota exceeded"},
		{"data.reason (dshd)", ErrInternal.WithData(map[string]any{"reason": "disk quota exceeded"}), "disk quota exceeded"},
		{"data.details (the TS SDK, acpx)", ErrInternal.WithData(json.RawMessage(`{"details":"disk quota exceeded"}`)), "disk quota exceeded"},
		{"data.error (the Go SDK)", ErrInternal.WithData(json.RawMessage(`{"error":"disk quota exceeded"}`)), "disk quota exceeded"},
		{"data.message", ErrInternal.WithData(json.RawMessage(`{"message":"disk quota exceeded"}`)), "disk quota exceeded"},
		{"data as a raw string", ErrInternal.WithData(json.RawMessage(`"disk quota exceeded"`)), "disk quota exceeded"},
		{"a nested error object", ErrInternal.WithData(json.RawMessage(`{"error":{"message":"disk quota exceeded","code":"EDQUOT"}}`)), "disk quota exceeded"},
		{"a Go value of data", ErrInternal.WithData(struct {
			Details string `json:"details"`
		}{"disk quota exceeded"}), "disk quota exceeded"},
		{"reason wins over message", ErrInternal.WithData(map[string]any{"message": "generic", "reason": "disk quota exceeded"}), "disk quota exceeded"},
		{"the field is named", ErrInvalidParams.WithData(map[string]any{"field": "cwd", "reason": "must be absolute"}), "cwd: must be absolute"},
		{"no data: the message", &Error{Code: -32603, Message: "Internal error"}, "Internal error"},
		{"data without a reason: the message", ErrMethodNotFound.WithData(map[string]any{"method": "x/y"}), "Method not found"},
		{"a message that says more keeps it", &Error{Code: -32603, Message: "The turn failed", Data: map[string]any{"reason": "the model server is down"}}, "The turn failed: the model server is down"},
		{"a message holding the reason is not repeated", &Error{Code: -32603, Message: "The turn failed: the model server is down", Data: map[string]any{"reason": "the model server is down"}}, "The turn failed: the model server is down"},
		{"nothing at all", &Error{Code: -32099}, "error -32099"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Reason(); got != tc.want {
				t.Errorf("Reason() = %q, want %q", got, tc.want)
			}
		})
	}
}
