// This file holds the one wait: a channel closing, or time running out.

package within

import "time"

// Closed waits up to d for ch to close and reports whether it did. A
// channel already closed costs no timer.
func Closed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
