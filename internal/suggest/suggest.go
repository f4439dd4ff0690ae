// This file implements the closeness measure and the hint wording.

package suggest

import (
	"fmt"
	"slices"
	"strings"
)

// Closest returns the candidate nearest to name, or "" when none is near
// enough to be what the user meant. Case is ignored, and swapping two
// neighbouring letters counts as one edit, the typos people make most.
// A candidate is near enough when it is at most a third of name's length
// away (at least one edit, at most three). A name that is itself a
// candidate needs no suggestion.
func Closest(name string, candidates []string) string {
	if slices.Contains(candidates, name) {
		return ""
	}
	limit := min(max(len(name)/3, 1), 3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		d := distance(strings.ToLower(name), strings.ToLower(c))
		// Of two equally near, the one as long as name: "modle" is more
		// likely "model" with two letters swapped than "mode" plus one.
		if d < bestDist || d == bestDist && best != "" && lenGap(c, name) < lenGap(best, name) {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean returns `; did you mean "X"?` for the closest candidate, or
// "" when there is none, ready to append to an error message.
func DidYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

func lenGap(a, b string) int { return max(len(a)-len(b), len(b)-len(a)) }

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes each cost one.
func distance(a, b string) int {
	// Three rows suffice: the transposition looks two rows back.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
