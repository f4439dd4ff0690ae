package llm

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestUsageSince_IsWhatAddAddedFieldByField(t *testing.T) {
	before := Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CachedInputTokens: 2, ReasoningTokens: 1}
	for _, tc := range []struct {
		name  string
		spent Usage
	}{
		{"nothing spent", Usage{}},
		{"every field", Usage{InputTokens: 100, OutputTokens: 40, TotalTokens: 140, CachedInputTokens: 30, ReasoningTokens: 7}},
		{"only output", Usage{OutputTokens: 3, TotalTokens: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := before
			now.Add(tc.spent)
			if got := now.Since(before); got != tc.spent {
				t.Errorf("Since = %+v, want %+v", got, tc.spent)
			}
		})
	}
	if got := before.Since(Usage{InputTokens: 12}); got.InputTokens != -2 || got.TotalTokens != 15 {
		t.Errorf("a total that went down: %+v, want InputTokens -2 and the rest kept", got)
	}
}

func TestSleep_WaitsTheDurationOrUntilTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(t.Context(), time.Hour); err != nil || time.Since(start) != time.Hour {
			t.Errorf("Sleep(1h) = %v after %v, want nil after 1h", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Minute {
			t.Errorf("Sleep(1h) under a 1m deadline = %v after %v, want the deadline after 1m", err, time.Since(start))
		}
		if err := Sleep(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep(0) on an ended context = %v, want its error", err)
		}
		if err := Sleep(t.Context(), -time.Second); err != nil {
			t.Errorf("Sleep(-1s) = %v, want nil at once", err)
		}
	})
}
