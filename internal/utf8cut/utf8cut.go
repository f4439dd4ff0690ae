// This file holds the cuts: a prefix that fits, the front of a kept
// tail, and one line of a longer text.

package utf8cut

import (
	"strings"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a character.
func Prefix[T ~string | ~[]byte](s T, n int) T {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// TrimPartial drops the continuation bytes that a cut at the front of p
// left there, so p starts on a character boundary.
func TrimPartial[T ~string | ~[]byte](p T) T {
	for i := 0; i < utf8.UTFMax && len(p) > 0 && !utf8.RuneStart(p[0]); i++ {
		p = p[1:]
	}
	return p
}

// Line is s shown on one line of at most n bytes and the marks: its first
// line, spaces trimmed, then " …" when more lines followed, and cut at n
// bytes, marked "…", when longer. A title or a summary of a command, a
// pattern or a task says so with it.
func Line(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if len(s) > n {
		s = Prefix(s, n) + "…"
	}
	return s
}
