//go:build unix

package acpprovider_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

func TestDepth_TheChildEnforcesTheLimitAcrossTheProcessBoundary(t *testing.T) {
	p := newProvider(t, nil)
	zero := 0
	cases := []struct {
		name   string
		parent parentOpts
		limit  *int
	}{
		{"the child is at the tree's limit", parentOpts{depth: 1, max: 2}, nil},
		{"the request's depth limit forbids grandchildren", parentOpts{}, &zero},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := newParent(t, tc.parent)
			run := start(t, p, subagents.StartRequest{Prompt: "delegate the report", Parent: parent.Scope, Options: dshdBinding(t, "delegate.json"), DepthLimit: tc.limit})
			res := wait(t, run)
			if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, "beyond the depth limit") {
				t.Fatalf("result = %+v", res)
			}
		})
	}
	t.Run("below the limit the child delegates", func(t *testing.T) {
		parent := newParent(t, parentOpts{})
		run := start(t, p, subagents.StartRequest{Prompt: "delegate the report", Parent: parent.Scope, Options: dshdBinding(t, "delegate.json")})
		if res := wait(t, run); !strings.Contains(res.Output, "Grandchild wrote") {
			t.Fatalf("result = %+v", res)
		}
	})
}

// chainBinding runs a child dshd whose own subagent tool is an acp
// binding to another dshd: dshd → dshd → dshd.
func chainBinding(t *testing.T) map[string]string {
	inner := "subagent=acp,command=" + dshdBin + ",args=" + strings.Join(dshdArgs(t, "chain.json"), " ")
	return map[string]string{"command": dshdBin, "args": quote(dshdArgs(t, "chain.json", "--subagent", inner)...)}
}

func TestChain_ThreeLevelsOfDshd(t *testing.T) {
	p := newProvider(t, nil)
	exp := &st.Exposure{}
	parent := newParent(t, parentOpts{expose: exp})
	run := start(t, p, subagents.StartRequest{Prompt: "delegate down the chain", Parent: parent.Scope, Options: chainBinding(t)})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, "B reporting from the end of the chain") {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	lines := exp.Lines()
	var grand bool
	for _, l := range lines {
		if l == "announce s_main/sa1/sa2 on s_main/sa1" {
			grand = true
		}
	}
	if !grand {
		t.Fatalf("the last level was not announced under the middle one: %q", lines)
	}
	checkNoAgentIDs(t, exp)
	checkNoProcesses(t)
}

func TestChain_CancelAtTheTopStopsEveryLevel(t *testing.T) {
	p := newProvider(t, nil)
	running := make(chan struct{}, 10)
	exp := &watchedExposure{Exposure: &st.Exposure{}, onRaw: func(child string, update json.RawMessage) {
		// The last level's state is relayed from the middle one.
		if child == "s_main/sa1" && strings.Contains(string(update), `"sessionId":"s_main/sa1/sa2","state":{"state":"running"}`) {
			running <- struct{}{}
		}
	}}
	parent := newParent(t, parentOpts{expose: exp})
	run := start(t, p, subagents.StartRequest{Prompt: "stall the chain", Parent: parent.Scope, Options: chainBinding(t)})
	done := make(chan subagents.Result, 1)
	go func() {
		res, _ := run.Wait(context.Background())
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("the chain ended before it was cancelled: %+v", res)
	case <-running:
	case <-time.After(watchdog):
		t.Fatal("the last level never ran")
	}
	run.Cancel()
	res := recv(t, done)
	if res.StopReason != subagents.StopAborted {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	checkNoProcesses(t)
}

// watchedExposure is a recording exposure that also reports relayed
// updates as they come.
type watchedExposure struct {
	*st.Exposure
	onRaw func(child string, update json.RawMessage)
}

func (w *watchedExposure) EmitRaw(child string, update json.RawMessage) {
	w.Exposure.EmitRaw(child, update)
	w.onRaw(child, update)
}
