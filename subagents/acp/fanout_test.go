//go:build unix

package acpprovider_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

func TestFanOut_ManyChildrenAtOnce(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	parent := newParent(t, parentOpts{expose: exp})
	sock := filepath.Join(t.TempDir(), "agent.sock")
	fakeDaemon(t, "unix:"+sock)
	const n = 8
	var wg sync.WaitGroup
	for i := range 2 * n {
		opts := fakeBinding(modeAgent)
		if i%2 == 1 {
			opts = map[string]string{"address": "unix:" + sock}
		}
		wg.Go(func() {
			want := fmt.Sprintf("task %d", i)
			run, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "echo " + want, Parent: parent.Scope, Options: opts})
			if err != nil {
				t.Error(err)
				return
			}
			defer run.Dispose()
			res := wait(t, run)
			if res.Output != "echo: "+want {
				t.Errorf("run %d: %+v", i, res)
			}
		})
	}
	wg.Wait()
	checkNoAgentIDs(t, exp)
	if res := ask(t, p, parent, "count", map[string]string{"address": "unix:" + sock}); res.Output != fmt.Sprintf("conns=1 sessions=%d", n+1) {
		t.Fatalf("the socket runs did not share one connection: %s", res.Output)
	}
}
