// End-to-end test of the journal bound during a turn: the turn that
// passed --max-journal-bytes finishes and is saved, but a mode change
// sent while it runs is refused, since nothing of the turn's bounds how
// many a client sends.

package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

func TestDuringATurnPastMaxJournalBytesAModeChangeIsRefused(t *testing.T) {
	const limit = 24 << 10
	ctx := testkit.Context(t)
	asked, gate := make(chan struct{}), make(chan struct{})
	var once, opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	srv := fakeModel(t)
	t.Cleanup(open) // before the server closes, should the test fail first
	srv.Handle(func(*openaitest.Request) openaitest.Reply {
		once.Do(func() { close(asked) })
		return openaitest.Reply{Hold: gate, Text: []string{"done"}}
	})
	state := t.TempDir()
	p := start(t, opts{}, "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", state, "--max-journal-bytes", fmt.Sprint(limit))
	c := stdioWire(p)
	sid := c.openSession(ctx, t.TempDir())

	// The prompt alone takes the journal past the bound; the turn runs on.
	answer := c.promptAsync(sid, strings.Repeat("p", limit))
	testkit.Await(t, asked, "the turn's model call")
	size := journalSize(t, state, sid)
	if size < limit {
		t.Fatalf("the journal is %d bytes, under the bound: the test needs a turn past it", size)
	}
	for range 3 {
		e := c.callFail(ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"})
		if !containsAll(e.Message, "The mode was not changed", "--max-journal-bytes") {
			t.Fatalf("a mode change during a turn past the bound answered %v", e)
		}
	}
	if got := journalSize(t, state, sid); got != size {
		t.Fatalf("refused mode changes grew the journal from %d to %d bytes", size, got)
	}
	open()
	if m := testkit.Await(t, answer, "the turn's answer"); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
		t.Fatalf("the turn that passed the bound answered %s %v, want end_turn", m.Result, m.Error)
	}
}
