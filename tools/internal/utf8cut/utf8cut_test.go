package utf8cut

import "testing"

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"fits", "abc", 3, "abc"},
		{"ascii", "abcdef", 4, "abcd"},
		{"inside a character", "aé", 2, "a"},
		{"after a character", "aéb", 3, "aé"},
		{"inside the first character", "日本", 2, ""},
		{"zero", "abc", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Prefix(tc.s, tc.n); got != tc.want {
				t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
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
