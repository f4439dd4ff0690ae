package shellwords

import (
	"slices"
	"testing"
)

func TestSplit_ReadsWordsAsAShellWould(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"serve --model scripted:/a b", []string{"serve", "--model", "scripted:/a", "b"}},
		{`  a   b  `, []string{"a", "b"}},
		{`'a b' "c d" e\ f`, []string{"a b", "c d", "e f"}},
		{`"say \"hi\"" 'it''s'`, []string{`say "hi"`, "its"}},
		{`x'' ""`, []string{"x", ""}},
		{"", nil},
	} {
		got, err := Split(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `trailing\`} {
		if _, err := Split(bad); err == nil {
			t.Errorf("Split(%q) did not fail", bad)
		}
	}
}

func TestFields_ForgivesWhatSplitRefuses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`456 high "Ann Lee"`, []string{"456", "high", "Ann Lee"}},
		{`'it''s' "a 'b'"`, []string{"its", "a 'b'"}},
		{`C:\dir\file x`, []string{`C:\dir\file`, "x"}},
		{`"open to the end`, []string{"open to the end"}},
		{"\t", nil},
	} {
		if got := Fields(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Fields(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestJoin_SplitsBackToTheSameWords(t *testing.T) {
	words := []string{"plain", "two words", "", `it's`, `back\slash`, `"q"`, "tab\there"}
	got, err := Split(Join(words))
	if err != nil || !slices.Equal(got, words) {
		t.Fatalf("Split(Join(%q)) = %q, %v", words, got, err)
	}
	if j := Join([]string{"a", "b"}); j != "a b" {
		t.Errorf("Join quoted plain words: %q", j)
	}
}
