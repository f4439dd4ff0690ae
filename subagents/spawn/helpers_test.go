package spawn_test

import (
	"context"
	"testing"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
)

func newSpawn(maxTurnRequests int) subagents.Provider {
	return spawn.New(&spawn.Options{InProcessOptions: subagents.InProcessOptions{MaxTurnRequests: maxTurnRequests}})
}

// collect waits for run on a goroutine, as its owner would, and delivers
// the result: a child's turn begins with its owner's first Wait, so a test
// that watches a child at work waits for it meanwhile.
func collect(t *testing.T, run subagents.Run) <-chan subagents.Result {
	t.Helper()
	ch := make(chan subagents.Result, 1)
	go func() {
		res, err := run.Wait(context.Background())
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		ch <- res
	}()
	return ch
}
