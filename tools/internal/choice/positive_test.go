package choice

import (
	"testing"
	"time"
)

func TestPositiveOr_AnUnsetOrNegativeSettingIsItsDefault(t *testing.T) {
	if got := PositiveOr(0, 7); got != 7 {
		t.Errorf("PositiveOr(0, 7) = %d, want 7", got)
	}
	if got := PositiveOr(-1, 7); got != 7 {
		t.Errorf("PositiveOr(-1, 7) = %d, want 7", got)
	}
	if got := PositiveOr(3, 7); got != 3 {
		t.Errorf("PositiveOr(3, 7) = %d, want 3", got)
	}
	if got := PositiveOr(-time.Second, time.Minute); got != time.Minute {
		t.Errorf("PositiveOr(-1s, 1m) = %v, want 1m", got)
	}
}
