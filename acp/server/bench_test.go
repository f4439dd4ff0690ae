package server_test

import "testing"

// BenchmarkPromptTurn measures the server's overhead per prompt turn: a
// client and the server over net.Pipe, the instant scripted model, a real
// journal in a temp dir (the fsync at turn end included).
func BenchmarkPromptTurn(b *testing.B) {
	h := newHarness(b, hopts{})
	sid := h.newSession()
	b.ReportAllocs()
	for b.Loop() {
		h.mustPrompt(sid, "hello", "end_turn")
	}
}
