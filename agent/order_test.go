package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// pathTool declares the path of its input as read or written (Accessor)
// and blocks each call until the test releases it.
type pathTool struct {
	name  string
	kind  tools.Kind
	write bool
	gate  *callGates
}

// callGates records which calls started and releases them one by one.
type callGates struct {
	mu      sync.Mutex
	started []string
	release map[string]chan struct{}
}

func (g *callGates) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release[id] == nil {
		g.release[id] = make(chan struct{})
	}
	return g.release[id]
}

func (g *callGates) running() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.started)
}

func (p *pathTool) Name() string                 { return p.name }
func (p *pathTool) Description() string          { return p.name }
func (p *pathTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (p *pathTool) Kind() tools.Kind             { return p.kind }
func (p *pathTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	var in struct{ ID, Path string }
	_ = json.Unmarshal(call.Input, &in)
	p.gate.mu.Lock()
	p.gate.started = append(p.gate.started, in.ID)
	p.gate.mu.Unlock()
	select {
	case <-p.gate.ch(in.ID):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &tools.Result{Output: in.ID}, nil
}

type accessorTool struct{ *pathTool }

func (a accessorTool) Access(ws *workspace.Workspace, input json.RawMessage) tools.Access {
	var in struct{ Path string }
	_ = json.Unmarshal(input, &in)
	p, err := ws.Resolve(in.Path)
	if err != nil {
		return tools.Access{}
	}
	if a.write {
		return tools.Access{Writes: []string{p}}
	}
	return tools.Access{Reads: []string{p}}
}

// TestToolCallsKeepTheModelsOrderWhereOneMayChangeWhatAnotherSees: the
// calls of one response run side by side except where an earlier call
// writes what a later one reads or writes (or reads what it writes): a
// read after a write of the same file waits for it, a command waits for
// everything before it and everything after it waits for the command,
// calls on other files and subagents of one response still run at once.
func TestToolCallsKeepTheModelsOrderWhereOneMayChangeWhatAnotherSees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &callGates{release: map[string]chan struct{}{}}
		read := accessorTool{&pathTool{name: "read", kind: tools.KindRead, gate: g}}
		write := accessorTool{&pathTool{name: "write", kind: tools.KindEdit, write: true, gate: g}}
		run := &pathTool{name: "run", kind: tools.KindExecute, gate: g}
		delegate := &pathTool{name: "delegate", kind: tools.KindOther, gate: g}
		ts := toolSet{"read": read, "write": write, "run": run, "delegate": delegate}
		calls := []struct{ id, tool, path string }{
			{"w-a", "write", "a.txt"},
			{"r-a", "read", "a.txt"},    // after w-a
			{"r-dir", "read", "sub"},    // free
			{"w-sub", "write", "sub/x"}, // after r-dir: the listing comes first
			{"d-1", "delegate", ""},     // after the writes before it
			{"d-2", "delegate", ""},     // beside d-1
			{"cmd", "run", ""},          // after everything before it
			{"r-b", "read", "b.txt"},    // after cmd
		}
		m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
			if step(req) > 0 {
				return text("done"), nil
			}
			var cs []llm.ToolCall
			for _, c := range calls {
				cs = append(cs, llm.ToolCall{ID: c.id, Name: c.tool, Arguments: fmt.Sprintf(`{"id":%q,"path":%q}`, c.id, c.path)})
			}
			return toolCalls(cs...), nil
		}}
		ws, err := workspace.New(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a := agent.New(agent.Options{ID: "order", Model: m, ModelID: "test", Tools: ts, Env: &tools.Env{Workspace: ws}})
		defer a.Close()
		done := make(chan error, 1)
		go func() {
			_, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
			done <- err
		}()
		step := func(want []string, release ...string) {
			t.Helper()
			synctest.Wait()
			got := g.running()
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("started %v, want %v", got, want)
			}
			for _, id := range release {
				close(g.ch(id))
			}
		}
		step([]string{"w-a", "r-dir"}, "r-dir")
		step([]string{"w-a", "r-dir", "w-sub"}, "w-a")
		step([]string{"w-a", "r-dir", "w-sub", "r-a"}, "w-sub")
		step([]string{"w-a", "r-dir", "w-sub", "r-a", "d-1", "d-2"}, "r-a", "d-1", "d-2")
		step([]string{"w-a", "r-dir", "w-sub", "r-a", "d-1", "d-2", "cmd"}, "cmd")
		step([]string{"w-a", "r-dir", "w-sub", "r-a", "d-1", "d-2", "cmd", "r-b"}, "r-b")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
