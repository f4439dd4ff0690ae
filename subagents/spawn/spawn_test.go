package spawn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

// setup returns a parent with the spawn provider registered.
func setup(t *testing.T, o st.ParentOptions) *st.Parent {
	t.Helper()
	return st.NewParentWith(t, o, spawn.New(nil))
}

func start(t *testing.T, p *st.Parent, req subagents.StartRequest) subagents.Run {
	t.Helper()
	return st.Start(t, p, spawn.Name, req)
}

func wait(t *testing.T, run subagents.Run) subagents.Result {
	t.Helper()
	return st.Wait(t, run)
}

func TestSpawn_ProviderDeclaresEveryCapabilityAndAFreshContext(t *testing.T) {
	p := spawn.New(nil)
	if p.Name() != "spawn" || p.InheritsParentContext() {
		t.Fatalf("name %q inherits %v", p.Name(), p.InheritsParentContext())
	}
	if c := p.Capabilities(); !c.OutputSchema || !c.DepthLimit || !c.ToolFilter {
		t.Fatalf("capabilities %+v", c)
	}
}

func TestStart_ReturnsOnlyOnceTheChildExistsAndIsRegistered(t *testing.T) {
	release := make(chan struct{})
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Block: release, Text: "done"}
	})})
	run := start(t, p, subagents.StartRequest{Prompt: "task"})
	a, ok := p.Registry.Get(run.ID())
	if !ok || a.ID() != run.ID() {
		t.Fatalf("the child %q is not registered when Start returns", run.ID())
	}
	close(release)
	wait(t, run)
	run.Dispose()
	if _, ok := p.Registry.Get(run.ID()); ok {
		t.Fatal("the child is still registered after Dispose")
	}
}

func TestObserve_StartObserverReachesTheLiveChildThroughTheRegistry(t *testing.T) {
	release := make(chan struct{})
	p := setup(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Block: release, Text: "done"}
	})})
	found := make(chan bool, 1)
	stop := p.Service.Observe(func(ev subagents.Event) {
		if ev.Kind == subagents.EventStart {
			a, ok := p.Registry.Get(ev.RunID)
			found <- ok && a.ID() == ev.RunID
		}
	})
	defer stop()
	run := start(t, p, subagents.StartRequest{Prompt: "task"})
	if !st.Recv(t, found) {
		t.Fatal("the start observer could not reach the live child")
	}
	close(release)
	wait(t, run)
}

func TestSpawn_ChildStartsEmptyWithItsOwnSystemPromptInTheParentsCwd(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{ModelID: "parent-model", Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "ok"}
	}), History: agentHistory("earlier question", "earlier answer")})
	run := start(t, p, subagents.StartRequest{Prompt: "the task"})
	wait(t, run)
	req := rec.All()[0]
	if len(req.Messages) != 1 || req.Messages[0].Content != "the task" || req.System == "" {
		t.Fatalf("child request messages = %+v, want the task only under a system prompt", req.Messages)
	}
	sys := st.System(req)
	for _, want := range []string{"You are a subagent", "Working directory: " + p.Scope.Cwd, "Model: parent-model", prompt.AskPermissionsNote} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if req.Model != "parent-model" {
		t.Errorf("model = %q, want the parent's", req.Model)
	}
}

func TestSpawn_SystemPromptComesFromTheRequestThenTheDefaultTemplate(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "ok"}
	})})
	wait(t, start(t, p, subagents.StartRequest{Prompt: "a", SystemPrompt: "You review code in {{cwd}}.", Persona: "Be terse."}))
	sys := st.System(rec.All()[0])
	if !strings.HasPrefix(sys, "You review code in "+p.Scope.Cwd+".") || strings.Contains(sys, "You are a subagent") {
		t.Fatalf("system prompt = %q", sys)
	}
	if !strings.Contains(sys, prompt.AskPermissionsNote) || !strings.Contains(sys, "Be terse.") {
		t.Fatalf("the permissions note or persona is missing: %q", sys)
	}
	_, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "a", SystemPrompt: "{{nope}}", Parent: p.Scope})
	if !errors.Is(err, subagents.ErrInvalidRequest) {
		t.Fatalf("a system prompt with an unknown variable started: %v", err)
	}
}

func TestSpawn_ProjectInstructionsReachTheChildAsTheyAreNow(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Always run make lint."), 0o600)
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Dir: dir, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "ok"}
	})})
	wait(t, start(t, p, subagents.StartRequest{Prompt: "a"}))
	if !strings.Contains(st.System(rec.All()[0]), "Always run make lint.") {
		t.Fatal("AGENTS.md is missing from the child's system prompt")
	}
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Never run make lint, it is broken."), 0o600)
	wait(t, start(t, p, subagents.StartRequest{Prompt: "b"}))
	if sys := st.System(rec.All()[1]); !strings.Contains(sys, "Never run make lint") || strings.Contains(sys, "Always") {
		t.Fatal("a changed AGENTS.md did not reach the next child")
	}
}

func TestSpawn_ModelAndMaxTokensInheritUnlessTheRequestOverrides(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{ModelID: "big", MaxTokens: 999, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "ok"}
	})})
	wait(t, start(t, p, subagents.StartRequest{Prompt: "a"}))
	wait(t, start(t, p, subagents.StartRequest{Prompt: "b", Model: "small", MaxTokens: 7}))
	reqs := rec.All()
	if reqs[0].Model != "big" || reqs[0].MaxTokens != 999 || reqs[1].Model != "small" || reqs[1].MaxTokens != 7 {
		t.Fatalf("models/max tokens = %s/%d, %s/%d", reqs[0].Model, reqs[0].MaxTokens, reqs[1].Model, reqs[1].MaxTokens)
	}
}

func TestSpawn_ToolFilterAppliesToTheParentsTools(t *testing.T) {
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		rec.Add(req)
		return st.Reply{Text: "ok"}
	})})
	for _, n := range []string{"read_file", "write_file", "grep"} {
		st.Register(t, p.Tools, &st.Tool{ToolName: n})
	}
	wait(t, start(t, p, subagents.StartRequest{Prompt: "a"}))
	wait(t, start(t, p, subagents.StartRequest{Prompt: "b", ToolFilter: &subagents.ToolFilter{Allow: []string{"read_file", "grep"}, Deny: []string{"grep"}}}))
	names := func(r *llm.Request) (out []string) {
		for _, tl := range r.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	reqs := rec.All()
	if got := strings.Join(names(reqs[0]), ","); got != "grep,read_file,write_file" {
		t.Errorf("unfiltered child tools = %s", got)
	}
	if got := strings.Join(names(reqs[1]), ","); got != "read_file" {
		t.Errorf("filtered child tools = %s", got)
	}
	before := p.Registry.Len()
	_, err := p.Service.Start(t.Context(), spawn.Name, subagents.StartRequest{Prompt: "c", Parent: p.Scope, ToolFilter: &subagents.ToolFilter{Allow: []string{"nope"}}})
	if !errors.Is(err, subagents.ErrInvalidRequest) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("an unknown tool name started: %v", err)
	}
	if p.Registry.Len() != before {
		t.Fatal("a failed Start left a child behind")
	}
}

func TestSpawn_ChildGetsItsOwnScopeOneDeeperAndCanDelegateWithinTheLimit(t *testing.T) {
	scopes := make(chan *subagents.Scope, 1)
	p := setup(t, st.ParentOptions{MaxDepth: 5, Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		if len(st.ToolResults(req)) > 0 || !st.IsChild(req) {
			return st.Reply{Text: "ok"}
		}
		return st.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "probe", Arguments: "{}"}}}
	})})
	st.Register(t, p.Tools, &st.Delegating{ToolName: "probe", Fn: func(_ context.Context, _ *tools.Call, sc *subagents.Scope) (*tools.Result, error) {
		scopes <- sc
		return &tools.Result{Output: "probed"}, nil
	}})
	depth := 1
	run := start(t, p, subagents.StartRequest{Prompt: "a", DepthLimit: &depth})
	result := collect(t, run)
	sc := st.Recv(t, scopes)
	st.Recv(t, result)
	if sc == p.Scope || sc.Depth != 1 || sc.MaxDepth != 2 || sc.Service != p.Service || sc.Cwd != p.Scope.Cwd {
		t.Fatalf("child scope = %+v", sc)
	}
	// The scope is the child's own: its session's agent is the run's, and
	// it is listed in the parent's registry.
	listed, ok := p.Registry.Get(run.ID())
	if sc.Session == nil || sc.Session.Agent().ID() != run.ID() || !ok || listed != sc.Session.Agent() || sc.SessionID != p.Scope.SessionID {
		t.Fatalf("child scope session = %v/%q", sc.Session, sc.SessionID)
	}
	if sc.Env.Workspace != p.Env.Workspace || sc.Env != sc.Session.Env() {
		t.Fatal("the child's env does not share the parent's workspace or is not its session's")
	}
}

func agentHistory(q, a string) agent.History {
	return agent.NewHistory(llm.Message{Role: llm.RoleUser, Content: q}, llm.Message{Role: llm.RoleAssistant, Content: a})
}
