package llm

import "testing"

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
