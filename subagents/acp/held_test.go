//go:build unix

package acpprovider_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// The bytes of updates held for session ids a child never announced are
// the connection's --max-queued-input-bytes (they are messages read and
// not yet handled), not a constant: a smaller setting holds less, and the
// drop names the setting.
func TestHostile_HeldUpdatesAreBoundedByTheQueuedInputSetting(t *testing.T) {
	var logs testkit.SyncBuffer
	p := newProvider(t, &acpprovider.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), HoldUnknown: time.Hour,
		Limits: rpc.Limits{MaxQueuedInput: 256 << 10}})
	before := liveHeap()
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "ghosts 2000 8192")
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "done" {
		t.Fatalf("result = %+v", res)
	}
	held := liveHeap() - before
	t.Logf("%d KiB held", held>>10)
	if held > 2<<20 {
		t.Errorf("the parent holds %d KiB for session ids the child never announced, with a 256 KiB bound", held>>10)
	}
	line := ""
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "holding no more updates") {
			line = l
		}
	}
	if !strings.Contains(line, "limit_bytes=262144") || !strings.Contains(line, "--max-queued-input-bytes") {
		t.Errorf("the drop's log line does not name the bound and its setting: %q", line)
	}
}
