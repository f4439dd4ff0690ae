package suggest

import "testing"

func TestClosest_FindsWhatTheUserMeantAndNothingFarFetched(t *testing.T) {
	keys := []string{"model", "modelUrl", "maxDepth", "maxTokens", "mode"}
	for _, tc := range []struct{ name, want string }{
		{"modle", "model"},       // swapped letters
		{"maxdepth", "maxDepth"}, // case
		{"modelurl", "modelUrl"},
		{"maxToken", "maxTokens"}, // a letter missing
		{"mod", "mode"},
		{"modl", "mode"},
		{"nonsense", ""},
		{"x", ""},
		{"model", ""}, // the name itself is no suggestion
	} {
		if got := Closest(tc.name, keys); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClosest_PrefersTheSwapToTheDropAtTheSameDistance(t *testing.T) {
	if got := Closest("modle", []string{"mode", "model"}); got != "model" {
		t.Errorf("got %q", got)
	}
}

func TestDidYouMean_IsEmptyWithoutACandidate(t *testing.T) {
	if got := DidYouMean("spwan", []string{"spawn", "fork"}); got != `; did you mean "spawn"?` {
		t.Errorf("got %q", got)
	}
	if got := DidYouMean("nonsense", []string{"spawn", "fork", "acp"}); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestDistance_CountsEditsAndTranspositions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"spawn", "spwan", 1}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
