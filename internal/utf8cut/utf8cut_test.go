package utf8cut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPrefix cuts text of one- to four-byte characters at every bound:
// the prefix is whole characters, within the bound, and the longest such.
func TestPrefix(t *testing.T) {
	const s = "aé日😀b"
	for n := 0; n <= len(s)+1; n++ {
		got := Prefix(s, n)
		if !strings.HasPrefix(s, got) || len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Prefix(%q, %d) = %q: not whole characters of s within the bound", s, n, got)
		}
		if rest := s[len(got):]; rest != "" {
			if _, size := utf8.DecodeRuneInString(rest); len(got)+size <= n {
				t.Fatalf("Prefix(%q, %d) = %q leaves out a character that fits", s, n, got)
			}
		}
	}
}

func TestTrimPartial(t *testing.T) {
	for _, tc := range []struct{ name, s, want string }{
		{"whole", "éa", "éa"},
		{"cut character", "é"[1:] + "a", "a"},
		{"cut of a 4-byte character", "😀"[1:] + "b", "b"},
		{"only continuation bytes", "😀"[1:], ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TrimPartial(tc.s); got != tc.want {
				t.Errorf("TrimPartial(%q) = %q, want %q", tc.s, got, tc.want)
			}
			if got := string(TrimPartial([]byte(tc.s))); got != tc.want {
				t.Errorf("TrimPartial([]byte(%q)) = %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}

// TestLine: the first line, trimmed (a CRLF's CR too), marked when more
// followed or when cut, and cut on a character boundary.
func TestLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"  go test ./...  ", 80, "go test ./..."},
		{"make\r\nmake install", 80, "make …"},
		{"\n\nfirst\nsecond", 80, "first …"},
		{"abcdef", 4, "abcd…"},
		{"a日本", 3, "a…"},
		{"", 80, ""},
	} {
		if got := Line(tc.in, tc.n); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
