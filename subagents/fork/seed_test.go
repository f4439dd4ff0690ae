package fork_test

// Tests named after the dsh-subagent-fork test cases they mirror (issue
// 15).

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// parentTurn runs one turn of the parent's own agent.
func parentTurn(t *testing.T, p *st.Parent, text string) agent.Result {
	t.Helper()
	res, err := p.Agent.Prompt(t.Context(), agent.Input{Text: text}, func(agent.Event) {})
	if err != nil {
		t.Fatalf("parent turn: %v", err)
	}
	return res
}

// Mirrors "forks an UNSEEDED (fresh) child when the parent has no
// completed turn": the child's request holds only its own task.
func TestFork_ForksAnUnseededFreshChildWhenTheParentHasNoCompletedTurn(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: rec.Model(func(*llm.Request) st.Reply { return st.Reply{Text: "fresh child"} })})
	if n := p.Agent.CompletedHistory().Len(); n != 0 {
		t.Fatalf("the parent has %d completed messages", n)
	}
	run := start(t, p, subagents.StartRequest{Prompt: "child q"})
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "fresh child" {
		t.Fatalf("result = %+v", res)
	}
	reqs := rec.All()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 || !strings.HasSuffix(reqs[0].Messages[0].Content, "child q") {
		t.Fatalf("the child's requests: %+v", reqs)
	}
	child, ok := p.Registry.Get(run.ID())
	if !ok || child.History().Len() != 2 {
		t.Fatalf("the child's conversation is not just its own turn (registered %v)", ok)
	}
}

// Mirrors "does NOT return the seeded parent output when the child
// produces no message of its own": the parent's last answer is in the
// child's context, but its result is the child's own (empty) answer.
func TestFork_DoesNotReturnTheSeededParentOutputWhenTheChildProducesNoMessageOfItsOwn(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: rec.Model(func(req *llm.Request) st.Reply {
		if st.LastUser(req) == "parent question" {
			return st.Reply{Text: "parent stale"}
		}
		return st.Reply{} // a bare stop: no message of its own
	})})
	parentTurn(t, p, "parent question")
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "child question"}))
	if res.StopReason != subagents.StopCompleted || res.Output != "" || res.LastMessage != nil {
		t.Fatalf("result = %+v (last message %+v)", res, res.LastMessage)
	}
	reqs := rec.All()
	if last := reqs[len(reqs)-1]; len(last.Messages) != 3 || last.Messages[1].Content != "parent stale" {
		t.Fatalf("the child did not see the parent's turn: %+v", last.Messages)
	}
}

// Mirrors multi-subagent's "the same parent drives a spawn child AND a
// fork child, then keeps working": both providers coexist on one service,
// the children are distinct, only the fork saw the parent's turn, and the
// parent's own conversation holds only its own two turns afterwards.
func TestMulti_TheSameParentDrivesASpawnChildAndAForkChildThenKeepsWorking(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]llm.Message{}
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		task := st.LastUser(req)
		mu.Lock()
		seen[task[strings.LastIndex(task, "\n")+1:]] = req.Messages
		mu.Unlock()
		switch {
		case strings.HasSuffix(task, "spawn task"):
			return st.Reply{Text: "spawn child reply"}
		case strings.HasSuffix(task, "fork task"):
			return st.Reply{Text: "fork child reply"}
		case task == "parent q1":
			return st.Reply{Text: "parent turn one"}
		}
		return st.Reply{Text: "parent turn two"}
	})})
	if _, err := p.Service.RegisterProvider(spawn.New(nil)); err != nil {
		t.Fatal(err)
	}
	if got := p.Service.List(); len(got) != 2 || got[0] != fork.Name || got[1] != spawn.Name {
		t.Fatalf("providers = %v", got)
	}
	parentTurn(t, p, "parent q1")

	spawnRun, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "spawn task", Parent: p.Scope})
	if err != nil {
		t.Fatal(err)
	}
	defer spawnRun.Dispose()
	if res := wait(t, spawnRun); res.StopReason != subagents.StopCompleted || res.Output != "spawn child reply" {
		t.Fatalf("spawn result = %+v", res)
	}
	forkRun := start(t, p, subagents.StartRequest{Prompt: "fork task"})
	if res := wait(t, forkRun); res.StopReason != subagents.StopCompleted || res.Output != "fork child reply" {
		t.Fatalf("fork result = %+v", res)
	}
	if spawnRun.ID() == forkRun.ID() {
		t.Fatalf("both children are %q", spawnRun.ID())
	}
	mu.Lock()
	spawnSaw, forkSaw := seen["spawn task"], seen["fork task"]
	mu.Unlock()
	if len(spawnSaw) != 1 {
		t.Fatalf("the spawned child saw %d messages, want only its task", len(spawnSaw))
	}
	if len(forkSaw) != 3 || forkSaw[0].Content != "parent q1" || forkSaw[1].Content != "parent turn one" {
		t.Fatalf("the forked child saw %+v", forkSaw)
	}
	spawnRun.Dispose()
	forkRun.Dispose()

	if res := parentTurn(t, p, "parent q2"); res.LastMessage == nil || res.LastMessage.Content != "parent turn two" {
		t.Fatalf("the parent's next turn: %+v", res)
	}
	var contents []string
	for _, m := range p.Agent.History().Messages() {
		contents = append(contents, m.Content)
	}
	if strings.Join(contents, "|") != "parent q1|parent turn one|parent q2|parent turn two" {
		t.Fatalf("the parent's conversation is %q", contents)
	}
}

// Mirrors dsh-agent-loop's "contains a strict-variable render failure: the
// turn errors, the loop keeps serving turns", for a forked child, whose
// system prompt is its parent's: the child's turn ends with an error that
// says so, no request reaches the model, and once the prompt renders
// again the next child completes a real model turn.
func TestRender_AFailedSystemPromptEndsTheForkedChildWithoutAModelRequest(t *testing.T) {
	var calls atomic.Int64
	var broken atomic.Bool
	broken.Store(true)
	p := setup(t, st.ParentOptions{
		Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
			calls.Add(1)
			return st.Reply{Text: "ok under " + st.System(req)}
		}),
		SystemFunc: func(context.Context) (string, error) {
			if broken.Load() {
				return "", errors.New(`prompt: unknown variable "cwd"`)
			}
			return "In /rescued.", nil
		},
	})
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "task"}))
	if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "system prompt") {
		t.Fatalf("result = %+v", res)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the model got %d requests", n)
	}
	broken.Store(false)
	res = wait(t, start(t, p, subagents.StartRequest{Prompt: "task"}))
	if res.StopReason != subagents.StopCompleted || res.Output != "ok under In /rescued." || calls.Load() != 1 {
		t.Fatalf("after the rescue: %+v, %d model calls", res, calls.Load())
	}
}
