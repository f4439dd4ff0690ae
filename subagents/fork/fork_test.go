package fork_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

func history(n int) agent.History {
	msgs := make([]llm.Message, n)
	for i := range msgs {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		msgs[i] = llm.Message{Role: role, Content: fmt.Sprintf("m%d", i)}
	}
	return agent.NewHistory(msgs...)
}

// setup returns a parent with the fork provider registered.
func setup(t testing.TB, o st.ParentOptions) *st.Parent {
	t.Helper()
	return st.NewParentWith(t, o, fork.New(nil))
}

func start(t testing.TB, p *st.Parent, req subagents.StartRequest) subagents.Run {
	t.Helper()
	return st.Start(t, p, fork.Name, req)
}

func wait(t testing.TB, run subagents.Run) subagents.Result {
	t.Helper()
	return st.Wait(t, run)
}

func TestFork_ProviderInheritsTheParentsContextAndDeclaresEveryCapability(t *testing.T) {
	p := fork.New(nil)
	c := p.Capabilities()
	if p.Name() != "fork" || !p.InheritsParentContext() || !c.OutputSchema || !c.DepthLimit || !c.ToolFilter {
		t.Fatalf("%s inherits=%v caps=%+v", p.Name(), p.InheritsParentContext(), c)
	}
}

func TestFork_TheChildSeesTheParentsCompletedTurnsUnderTheParentsSystemPrompt(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{System: "You are the parent agent.", History: history(4),
		Model: rec.Model(func(*llm.Request) st.Reply { return st.Reply{Text: "forked answer"} })})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "summarise m2", DenyPermissions: true}))
	if res.Output != "forked answer" {
		t.Fatalf("output = %q", res.Output)
	}
	req := rec.All()[0]
	if st.System(req) != "You are the parent agent." {
		t.Fatalf("system = %q, want the parent's, unchanged", st.System(req))
	}
	for i := range 4 {
		if req.Messages[i].Content != fmt.Sprintf("m%d", i) {
			t.Fatalf("message %d = %q", i, req.Messages[i].Content)
		}
	}
	task := req.Messages[4]
	if len(req.Messages) != 5 || task.Role != llm.RoleUser || !strings.HasSuffix(task.Content, "# Task\n\nsummarise m2") {
		t.Fatalf("the task message = %+v", task)
	}
	if !strings.Contains(task.Content, "forked from this conversation") || !strings.Contains(task.Content, prompt.FixedPermissionsNote) {
		t.Fatalf("the fork framing or the fixed-permissions note is missing: %q", task.Content)
	}
}

func TestFork_OnlyTheParentsCompletedTurnsAreShared(t *testing.T) {
	rec := &st.Requests{}
	childReq := make(chan *llm.Request, 1)
	model := rec.Model(func(req *llm.Request) st.Reply {
		if strings.Contains(st.LastUser(req), "# Task") {
			childReq <- req
			return st.Reply{Text: "child done"}
		}
		if len(st.ToolResults(req)) == 0 {
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "f1", Name: "forker", Arguments: "{}"}}}
		}
		return st.Reply{Text: "parent done"}
	})
	p := setup(t, st.ParentOptions{History: history(2), Model: model})
	st.Register(t, p.Tools, &st.Delegating{ToolName: "forker", Fn: func(ctx context.Context, call *tools.Call, sc *subagents.Scope) (*tools.Result, error) {
		run, err := sc.Service.Start(ctx, fork.Name, subagents.StartRequest{Prompt: "side task", Parent: sc})
		if err != nil {
			return nil, err
		}
		defer run.Dispose()
		res, err := run.Wait(ctx)
		return &tools.Result{Output: res.Output}, err
	}})
	if _, err := p.Agent.Prompt(t.Context(), agent.Input{Text: "running turn"}, func(agent.Event) {}); err != nil {
		t.Fatal(err)
	}
	req := <-childReq
	for _, m := range req.Messages {
		if m.Content == "running turn" || len(m.ToolCalls) > 0 {
			t.Fatalf("the child saw the parent's running turn: %+v", req.Messages)
		}
	}
	if len(req.Messages) != 2+1 || req.System == "" {
		t.Fatalf("the child saw %d messages, want 2 completed + task under a system prompt", len(req.Messages))
	}
}

func TestFork_TheChildSharesThePrefixAndNothingItAppendsReachesTheParent(t *testing.T) {
	gate := make(chan struct{})
	p := setup(t, st.ParentOptions{History: history(10), Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Text: "child answer"}
	}),
		// Hold the child's turn at its system prompt (the parent's), before
		// it appends anything.
		SystemFunc: func(ctx context.Context) (string, error) {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			return "sys", nil
		}})
	parentLen := p.Agent.CompletedHistory().Len()
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	child, ok := p.Registry.Get(run.ID())
	if !ok {
		t.Fatal("child not registered")
	}
	if got := child.History().Len(); got != parentLen {
		t.Fatalf("the child's history before its turn has %d messages, want the parent's %d", got, parentLen)
	}
	close(gate)
	wait(t, run)
	if got := child.History().Len(); got != parentLen+2 {
		t.Fatalf("the child's history after its turn has %d messages, want %d", got, parentLen+2)
	}
	if got := p.Agent.History().Len(); got != parentLen {
		t.Fatalf("the parent's history changed to %d messages", got)
	}
	h := p.Agent.History()
	if last, _ := h.Last(); last.Content != "m9" {
		t.Fatalf("the parent's last message is %q", last.Content)
	}
}

func TestFork_StartCostsTheSameMemoryAtAnyParentLength(t *testing.T) {
	const starts = 50
	perStart := func(n int) uint64 {
		block := make(chan struct{})
		defer close(block)
		p := setup(t, st.ParentOptions{History: history(n), SystemFunc: func(ctx context.Context) (string, error) {
			select {
			case <-block:
			case <-ctx.Done():
			}
			return "", ctx.Err()
		}})
		runs := make([]subagents.Run, 0, starts)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range starts {
			run, err := p.Service.Start(context.Background(), fork.Name, subagents.StartRequest{Prompt: "x", Parent: p.Scope})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, run)
		}
		runtime.ReadMemStats(&after)
		for _, r := range runs {
			r.Dispose()
		}
		return (after.TotalAlloc - before.TotalAlloc) / starts
	}
	small, large := perStart(10), perStart(100_000)
	// Bytes allocated, not time: copying a 100,000-message log would cost
	// megabytes per Start; sharing the prefix costs nothing extra. The
	// margin only absorbs background noise.
	if large > small+64<<10 {
		t.Fatalf("Start allocates %d bytes at 100,000 parent messages and %d at 10", large, small)
	}
}

func TestSteer_AMessageSentBeforeTheTurnStartsIsNotLost(t *testing.T) {
	rec := &st.Requests{}
	gate := make(chan struct{})
	p := setup(t, st.ParentOptions{Model: rec.Model(func(*llm.Request) st.Reply { return st.Reply{Text: "done"} }),
		SystemFunc: func(context.Context) (string, error) { <-gate; return "sys", nil }})
	run := start(t, p, subagents.StartRequest{Prompt: "x"})
	if err := run.(subagents.Steerable).SendMessage(t.Context(), "early note"); err != nil {
		t.Fatal(err)
	}
	close(gate)
	wait(t, run)
	var users []string
	for _, m := range rec.All()[0].Messages {
		if m.Role == llm.RoleUser {
			users = append(users, m.Content)
		}
	}
	if len(users) != 2 || !strings.HasSuffix(users[0], "# Task\n\nx") || users[1] != "early note" {
		t.Fatalf("user messages = %q", users)
	}
}

func TestFork_NeedsTheParentsSession(t *testing.T) {
	p := setup(t, st.ParentOptions{})
	sc := *p.Scope
	sc.Session = nil
	_, err := p.Service.Start(t.Context(), fork.Name, subagents.StartRequest{Prompt: "x", Parent: &sc})
	if !errors.Is(err, subagents.ErrInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
}

func TestFork_ABindingsSystemPromptIsTheTasksInstructionsUnderTheParentsSystemPrompt(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{System: "You are the parent agent.", History: history(2),
		Model: rec.Model(func(*llm.Request) st.Reply { return st.Reply{Text: "ok"} })})
	wait(t, start(t, p, subagents.StartRequest{Prompt: "check m1", SystemPrompt: "You only read, in {{cwd}}.", Persona: "Be brief."}))
	req := rec.All()[0]
	task := req.Messages[len(req.Messages)-1].Content
	if st.System(req) != "You are the parent agent." ||
		!strings.Contains(task, "# Instructions for this task\n\nYou only read, in "+p.Scope.Cwd+".\n\nBe brief.\n\n# Task\n\ncheck m1") {
		t.Fatalf("system %q, task %q", st.System(req), task)
	}
	if _, err := p.Service.Start(t.Context(), "fork", subagents.StartRequest{Prompt: "x", Parent: p.Scope, SystemPrompt: "{{nope}}"}); err == nil {
		t.Fatal("a system prompt that does not render started a child")
	}
}
