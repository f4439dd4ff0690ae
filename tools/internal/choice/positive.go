// This file holds PositiveOr, what an unset numeric setting means.

package choice

import "time"

// PositiveOr is v, or def when v is zero or negative: what a numeric
// setting left unset (or set to nonsense) means.
func PositiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
