// This file holds what the in-process providers' tests share: a record
// of the requests a model saw, and starting and waiting for a run through
// the parent's service.

package subagenttest

import (
	"context"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

// Requests keeps every request a model received.
type Requests struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

// Add records req.
func (r *Requests) Add(req *llm.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
}

// All returns the requests recorded so far.
func (r *Requests) All() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*llm.Request(nil), r.reqs...)
}

// Model is a model that records each request and answers it with reply.
func (r *Requests) Model(reply func(*llm.Request) Reply) Model {
	return func(_ context.Context, req *llm.Request) Reply {
		r.Add(req)
		return reply(req)
	}
}

// NewParentWith is [NewParent] with prov registered in the parent's
// service.
func NewParentWith(tb testing.TB, o ParentOptions, prov subagents.Provider) *Parent {
	tb.Helper()
	p := NewParent(tb, o)
	if _, err := p.Service.RegisterProvider(prov); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Start starts a run of provider through p's service, as a child of p
// unless req names another parent. The run is disposed when the test
// ends.
func Start(tb testing.TB, p *Parent, provider string, req subagents.StartRequest) subagents.Run {
	tb.Helper()
	if req.Parent == nil {
		req.Parent = p.Scope
	}
	run, err := p.Service.Start(tb.Context(), provider, req)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { run.Dispose() })
	return run
}

// Wait waits for run's result.
func Wait(tb testing.TB, run subagents.Run) subagents.Result {
	tb.Helper()
	res, err := run.Wait(tb.Context())
	if err != nil {
		tb.Fatalf("Wait: %v", err)
	}
	return res
}
