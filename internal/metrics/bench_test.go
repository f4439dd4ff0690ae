package metrics

import (
	"testing"
	"time"
)

// The cost of counting a turn, from every core at once: the call each
// prompt turn makes as it ends.
func BenchmarkTurnEnded(b *testing.B) {
	m := New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.TurnEnded("end_turn", 30*time.Millisecond, nil)
		}
	})
}

// The cost of counting a connection opened and closed.
func BenchmarkConnOpenedClosed(b *testing.B) {
	m := New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ConnOpened("websocket")
			m.ConnClosed("websocket")
		}
	})
}
