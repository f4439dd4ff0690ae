// End-to-end test of a background command's output and the journal
// bound: the command runs on after its turn, and its output records,
// written outside any turn, stop once --max-journal-bytes is reached
// instead of growing the journal for as long as it runs.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools/tasks"
)

func TestBackground_ACommandsOutputIsNotRecordedPastMaxJournalBytes(t *testing.T) {
	const limit = 64 << 10
	ctx, cwd, _, srv := commandTest(t, "unused")
	// About 320 KiB a second, so each output record (one a second) holds
	// the whole tail the task keeps; a line in ticks after each burst.
	command := `i=0; while :; do i=$((i+1)); yes 0123456789abcdef | head -c 65536; echo "tick $i" >> ticks; sleep 0.2; done`
	srv.Handle(turnSteps(always(bgCommand("c1", command))))
	state := t.TempDir()
	d := bgDaemon{srv: srv, stateDir: state, args: []string{"--max-journal-bytes", fmt.Sprint(limit)}}
	p, w, sid := d.open(ctx, t, cwd)
	w.endTurn(ctx, sid, "start it")
	after := journalSize(t, state, sid)

	// Some five output records' worth of running, past the bound.
	waitJournal(ctx, t, filepath.Join(cwd, "ticks"), "tick 25")
	w.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)

	// At most one output record crossed the bound, and the task's end
	// holds its tail: two tails beyond where the turn left the journal.
	tail := int64(tasks.DefaultOutputLimit) + 4<<10
	got := journalSize(t, state, sid)
	if allowed := max(after, limit) + 2*tail; got > allowed {
		t.Fatalf("the journal grew to %d bytes while the command ran, from %d after its turn (bound %d, at most %d expected)", got, after, limit, allowed)
	}
	if n := strings.Count(p.stderr.String(), session.LogTaskOutputHeld); n != 1 || !strings.Contains(p.stderr.String(), "setting=--max-journal-bytes") {
		t.Fatalf("the held output was logged %d times, want once naming the setting; stderr:\n%s", n, p.stderr)
	}
	// What the task kept is in its end's record, which a load restores.
	b, err := os.ReadFile(journalPath(state, sid))
	if err != nil || !strings.Contains(string(b), `"k":"task"`) || !strings.Contains(string(b), "0123456789abcdef") {
		t.Fatalf("the journal lacks the task's end with its output: %v", err)
	}
}
