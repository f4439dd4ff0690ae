// This file implements the Markdown code fence tools show text in.

package tools

import "strings"

// Fence wraps s in a Markdown code fence tagged lang, longer than any
// backtick run in s, so that an editor rendering Markdown shows every
// line of s verbatim: a command in its permission question, a command's
// output.
func Fence(s, lang string) string {
	n, run := 3, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return f + lang + "\n" + s + f
}
