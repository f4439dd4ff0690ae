// End-to-end test of --max-held-child-updates: a real dshd delegates to
// an acp agent (a shell script on real pipes) that sends updates for
// session ids it never announces, and holds no more of them than the
// setting says.

package main

import (
	"strings"
	"testing"
)

// TestTheParentHoldsAtMostMaxHeldChildUpdatesForUnannouncedIds: with
// --max-held-child-updates 100, 300 updates for unannounced ids (a few
// KiB, far under --max-queued-input-bytes) hit the count, and the drop's
// one log line names the setting and its limit; with the default (1024)
// all 300 are held and nothing is said. Before, the flag did not exist,
// and the provider's count was a constant of 1024.
func TestTheParentHoldsAtMostMaxHeldChildUpdatesForUnannouncedIds(t *testing.T) {
	script := testdataScript(t, "ghostagent.sh")
	binding := "ghosty=acp,command=/bin/sh,args=" + script + ",env=GHOSTS=300"
	const drop = "holding no more updates for session ids the agent has not announced"
	for _, tc := range []struct {
		name string
		args []string
		want []string // in the drop's line; none: no drop
	}{
		{"--max-held-child-updates 100", []string{"--max-held-child-updates", "100"}, []string{"limit=100 ", "held=100 ", "setting=--max-held-child-updates"}},
		{"the default", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--sandbox", "off", "--subagent", binding}, tc.args...)
			result, stderr := delegateOnce(t, "ghosty", nil, t.TempDir(), args...)
			if !strings.Contains(result, "done") {
				t.Fatalf("the child's turn did not complete: %q; stderr:\n%s", result, stderr)
			}
			var lines []string
			for l := range strings.Lines(stderr) {
				if strings.Contains(l, drop) {
					lines = append(lines, l)
				}
			}
			switch {
			case tc.want == nil && len(lines) != 0:
				t.Fatalf("the default held 300 updates, yet dropped:\n%s", stderr)
			case tc.want == nil:
			case len(lines) != 1:
				t.Fatalf("the drop was logged %d times, want once:\n%s", len(lines), stderr)
			default:
				for _, w := range tc.want {
					if !strings.Contains(lines[0], w) {
						t.Errorf("the drop's line lacks %q:\n%s", w, lines[0])
					}
				}
			}
		})
	}
}
