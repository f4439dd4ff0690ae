package acp

import "testing"

// The rule itself is tested in internal/reason; this holds Reason to it
// for every sentinel of §21: each message only names its code, so a
// reason in Data replaces it.
func TestReason_ASentinelsMessageGivesWayToThePeersReason(t *testing.T) {
	for _, e := range []*Error{ErrParse, ErrInvalidRequest, ErrMethodNotFound, ErrInvalidParams, ErrInternal, ErrRequestCancelled, ErrAuthRequired, ErrResourceNotFound} {
		t.Run(e.Message, func(t *testing.T) {
			if got := e.WithData(map[string]any{"reason": "disk quota exceeded"}).Reason(); got != "disk quota exceeded" {
				t.Errorf("Reason() = %q, want the reason alone", got)
			}
			if got := e.Reason(); got != e.Message {
				t.Errorf("Reason() without data = %q, want %q", got, e.Message)
			}
		})
	}
}
