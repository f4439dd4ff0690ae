package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
)

// cancellingTool cancels the turn the first time it runs and counts its
// runs, noting any that began after the turn was cancelled.
type cancellingTool struct {
	cancel context.CancelFunc
	runs   atomic.Int64
	late   atomic.Int64
}

func (c *cancellingTool) Name() string                 { return "stop" }
func (c *cancellingTool) Description() string          { return "cancels the turn" }
func (c *cancellingTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (c *cancellingTool) Kind() tools.Kind             { return tools.KindRead }
func (c *cancellingTool) Execute(ctx context.Context, _ *tools.Call) (*tools.Result, error) {
	c.runs.Add(1)
	if ctx.Err() != nil {
		c.late.Add(1)
	}
	c.cancel()
	return &tools.Result{Output: "done"}, nil
}

// A turn cancelled while its tool calls wait for a slot starts none of
// them: a call that wins the slot after the cancel ends as cancelled
// without running, however the wait is decided.
func TestRunTools_ACancelledTurnStartsNoTool(t *testing.T) {
	const loops, calls = 300, 8
	for i := range loops {
		ctx, cancel := context.WithCancel(t.Context())
		tool := &cancellingTool{cancel: cancel}
		var tcs []llm.ToolCall
		for j := range calls {
			tcs = append(tcs, llm.ToolCall{ID: fmt.Sprint(j), Name: "stop", Arguments: "{}"})
		}
		m := &funcModel{reply: func(context.Context, *llm.Request) ([]llm.Event, error) { return toolCalls(tcs...), nil }}
		a := agent.New(agent.Options{ID: t.Name(), Model: m, ModelID: "test", Tools: toolSet{"stop": tool}, MaxParallelTools: 1})
		res, err := a.Prompt(ctx, agent.Input{Text: "go"}, func(agent.Event) {})
		a.Close()
		cancel()
		if err != nil || res.StopReason != agent.StopCancelled {
			t.Fatalf("turn %d: %+v, %v", i, res, err)
		}
		if n, late := tool.runs.Load(), tool.late.Load(); n != 1 || late != 0 {
			t.Fatalf("turn %d: %d tool runs, %d of them after the cancel; want the one that cancelled", i, n, late)
		}
	}
}
