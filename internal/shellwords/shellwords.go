package shellwords

import (
	"errors"
	"strings"
)

// Split splits s as a shell would: blanks (space, tab, newline) separate
// words, '…' keeps everything literally, "…" keeps everything but \" and
// \\, and a backslash elsewhere escapes the next character. An unclosed
// quote or a trailing backslash is an error.
func Split(s string) ([]string, error) {
	return split(s, true)
}

// Fields splits s the forgiving way a prompt's arguments are read: blanks
// separate words and '…' or "…" hold blanks, but a backslash is an
// ordinary character (a Windows path keeps its separators) and an
// unclosed quote runs to the end.
func Fields(s string) []string {
	words, _ := split(s, false)
	return words
}

// Join quotes each word only where it needs it, so that Split gives the
// words back.
func Join(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\") {
			quoted[i] = w
			continue
		}
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

func split(s string, strict bool) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\' && strict:
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'' || (c == '"' && !strict):
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				if strict {
					return nil, errors.New("unterminated ' quote")
				}
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated \" quote")
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
