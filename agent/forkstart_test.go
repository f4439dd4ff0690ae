package agent_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// A fork shares its parent's completed turns; starting one must not walk
// them (issue 9: agent.New estimated the inherited history's tokens
// message by message, so fork Start grew with the parent's length). The
// test counts the parent's messages that anything estimates during Start.
func TestForkStart_VisitsNoneOfTheParentsMessages(t *testing.T) {
	const n = 1000
	// The child's turn is held at its system prompt (the parent's, which a
	// fork reuses), so only Start itself is observed.
	p := st.NewParent(t, st.ParentOptions{History: agent.NewHistory(msgs("parent message", n)...), SystemFunc: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}})
	if _, err := p.Service.RegisterProvider(fork.New(nil)); err != nil {
		t.Fatal(err)
	}
	var visits atomic.Int64
	restore := agent.OnEstimate(func(m llm.Message) {
		if strings.HasPrefix(m.Content, "parent message ") {
			visits.Add(1)
		}
	})
	run, err := p.Service.Start(context.Background(), fork.Name, subagents.StartRequest{Prompt: "x", Parent: p.Scope})
	if err != nil {
		restore()
		t.Fatal(err)
	}
	got := visits.Load()
	run.Dispose() // the child's turn has ended: nothing estimates any more
	restore()
	if got != 0 {
		t.Fatalf("fork Start visited %d of the parent's %d messages, want none", got, n)
	}
}
