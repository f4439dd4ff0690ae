// This file holds the two cuts: a prefix that fits, and the front of a
// kept tail.

package utf8cut

import "unicode/utf8"

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
