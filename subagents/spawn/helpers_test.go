package spawn_test

import (
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
)

func newSpawn(maxTurnRequests int) subagents.Provider {
	return spawn.New(&spawn.Options{MaxTurnRequests: maxTurnRequests})
}
