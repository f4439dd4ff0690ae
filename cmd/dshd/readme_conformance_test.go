// End-to-end tests of README's `dshd conformance` options: --list lists
// the cases (it needed an agent command it never ran), --case narrows the
// list too, and a --case that is no regexp is a mistake in the command
// line (exit 2), not a failure of the run.

package main

import (
	"strings"
	"testing"
)

func TestConformanceListNeedsNoAgentAndFollowsCase(t *testing.T) {
	code, stdout, stderr := runDshd(t, nil, "conformance", "--list")
	if code != 0 || !strings.Contains(stdout, "data/batch\t") || strings.Count(stdout, "\n") < 50 {
		t.Fatalf("conformance --list: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runDshd(t, nil, "conformance", "--list", "--case", "^data/batch$")
	if code != 0 || strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, "data/batch\t") {
		t.Fatalf("conformance --list --case: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

func TestConformanceCaseThatIsNoRegexpIsExit2(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "an unclosed group", args: []string{"conformance", "--case", "(", "--", "true"},
			want: []string{`--case "("`, "missing closing )"}},
	})
}
