package within

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		start := time.Now()
		if Closed(open, time.Second) {
			t.Fatal("a channel nobody closes was reported closed")
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("waited %v for an open channel, want the whole second", waited)
		}

		closed := make(chan struct{})
		close(closed)
		start = time.Now()
		if !Closed(closed, time.Hour) || time.Since(start) != 0 {
			t.Fatal("a closed channel was not reported closed at once")
		}

		later := make(chan struct{})
		go func() {
			time.Sleep(10 * time.Millisecond)
			close(later)
		}()
		start = time.Now()
		if !Closed(later, time.Hour) || time.Since(start) != 10*time.Millisecond {
			t.Fatal("a channel closed during the wait was not reported when it closed")
		}
	})
}
