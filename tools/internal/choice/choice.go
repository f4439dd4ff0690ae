// This file holds Parse and the wording of its error.

package choice

import (
	"fmt"
	"strings"
)

// Parse returns the choice s names; "" is choices[0], the default. what
// names the setting in the error, which lists the choices: `sandbox "x":
// want workspace-write, read-only or off`.
func Parse[T ~string](what, s string, choices ...T) (T, error) {
	if s == "" {
		return choices[0], nil
	}
	for _, c := range choices {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s %q: want %s", what, s, orList(choices))
}

// orList is "a", "a or b", "a, b or c".
func orList[T ~string](choices []T) string {
	words := make([]string, len(choices))
	for i, c := range choices {
		words[i] = string(c)
	}
	last := len(words) - 1
	if last == 0 {
		return words[0]
	}
	return strings.Join(words[:last], ", ") + " or " + words[last]
}
