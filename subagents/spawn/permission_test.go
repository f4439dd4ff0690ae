package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/permission"
)

// writer is a model whose child writes out.txt with write_file, then
// reports the tool's answer.
func writer(rec *st.Requests) st.Model {
	return func(_ context.Context, req *llm.Request) st.Reply {
		if rec != nil {
			rec.Add(req)
		}
		if res := st.ToolResults(req); len(res) > 0 {
			return st.Reply{Text: "tool said: " + res[0]}
		}
		return st.Reply{ToolCalls: []llm.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"out.txt","content":"hi"}`}}}
	}
}

type askLog struct {
	mu   sync.Mutex
	reqs []tools.PermissionRequest
}

func (l *askLog) asker(answer permission.Answer) permission.Asker {
	return permission.AskerFunc(func(_ context.Context, req tools.PermissionRequest) (permission.Answer, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.reqs = append(l.reqs, req)
		return answer, nil
	})
}

func (l *askLog) all() []tools.PermissionRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tools.PermissionRequest(nil), l.reqs...)
}

func TestPermission_AChildsRequestsReachTheParentsGateLabelledWithTheChild(t *testing.T) {
	cases := []struct {
		name      string
		answer    permission.Answer
		exposed   bool
		wantFile  bool
		wantLabel func(p *st.Parent, res subagents.Result) string
	}{
		{"a request the user allows lets the child write in the parent's cwd", permission.AllowOnce, false, true,
			func(*st.Parent, subagents.Result) string { return "tc_parent_1" }},
		{"a request the user rejects stays rejected for the child", permission.RejectOnce, false, false,
			func(*st.Parent, subagents.Result) string { return "tc_parent_1" }},
		{"an exposed child's request is labelled with its session", permission.AllowOnce, true, true,
			func(_ *st.Parent, res subagents.Result) string { return res.ChildSessionID }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := &askLog{}
			o := st.ParentOptions{Model: writer(nil), Permission: permission.NewPolicy(permission.ModeAsk, log.asker(tc.answer))}
			if tc.exposed {
				o.Expose = &st.Exposure{}
			}
			p := setup(t, o)
			st.Register(t, p.Tools, builtin.NewWriteFile())
			res := wait(t, start(t, p, subagents.StartRequest{Prompt: "write", ToolCallID: "tc_parent_1"}))
			asked := log.all()
			if len(asked) != 1 {
				t.Fatalf("the parent's asker was asked %d times", len(asked))
			}
			if want := tc.wantLabel(p, res); asked[0].Requester != want || want == "" {
				t.Fatalf("requester = %q, want %q", asked[0].Requester, want)
			}
			_, err := os.Stat(filepath.Join(p.Scope.Cwd, "out.txt"))
			if (err == nil) != tc.wantFile {
				t.Fatalf("file written = %v, want %v (%s)", err == nil, tc.wantFile, res.Output)
			}
		})
	}
}

func TestPermission_AChildNeverGetsMorePermissionThanItsParent(t *testing.T) {
	log := &askLog{}
	policy := permission.NewPolicy(permission.ModeAsk, log.asker(permission.RejectAlways))
	p := setup(t, st.ParentOptions{Model: writer(nil), Permission: policy})
	st.Register(t, p.Tools, builtin.NewWriteFile())
	// The user said "never" to write_file for the parent; the child is
	// refused without being asked again.
	if d, _ := policy.Check(t.Context(), tools.PermissionRequest{ToolName: "write_file", Effect: tools.EffectEdit}); d != tools.Rejected {
		t.Fatalf("decision = %v", d)
	}
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "write"}))
	if len(log.all()) != 1 {
		t.Fatalf("asked %d times, want only the parent's question", len(log.all()))
	}
	if _, err := os.Stat(filepath.Join(p.Scope.Cwd, "out.txt")); err == nil {
		t.Fatal("the child wrote a file its parent may not write")
	}
	if !strings.Contains(res.Output, "reject") {
		t.Fatalf("the child was not told it was rejected: %q", res.Output)
	}
}

func TestPermission_DenyPermissionsRejectsAtOnceAndTellsTheChildItsScopeIsFixed(t *testing.T) {
	log := &askLog{}
	rec := &st.Requests{}
	p := setup(t, st.ParentOptions{Model: writer(rec), Permission: permission.NewPolicy(permission.ModeYolo, log.asker(permission.AllowOnce))})
	st.Register(t, p.Tools, builtin.NewWriteFile())
	res := wait(t, start(t, p, subagents.StartRequest{Prompt: "write", DenyPermissions: true}))
	if len(log.all()) != 0 {
		t.Fatal("a child pinned to deny asked the user")
	}
	if _, err := os.Stat(filepath.Join(p.Scope.Cwd, "out.txt")); err == nil {
		t.Fatal("a child pinned to deny wrote a file, although its parent runs in yolo")
	}
	if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, "refused without asking anyone") || strings.Contains(res.Output, "user") {
		t.Fatalf("result = %+v, want a refusal that asked nobody", res)
	}
	if sys := st.System(rec.All()[0]); !strings.Contains(sys, prompt.FixedPermissionsNote) || strings.Contains(sys, prompt.AskPermissionsNote) {
		t.Fatalf("the child was not told its scope is fixed:\n%s", sys)
	}
}

func TestPermission_AGrandchildsRequestKeepsItsOwnLabel(t *testing.T) {
	log := &askLog{}
	nestOnce := st.Model(func(ctx context.Context, req *llm.Request) st.Reply {
		if strings.Contains(st.LastUser(req), "nest") && len(st.ToolResults(req)) == 0 {
			return st.Reply{ToolCalls: []llm.ToolCall{{ID: "n1", Name: "nest", Arguments: "{}"}}}
		}
		return writer(nil)(ctx, req)
	})
	p := setup(t, st.ParentOptions{Model: nestOnce, MaxDepth: 3, Permission: permission.NewPolicy(permission.ModeAsk, log.asker(permission.AllowOnce)), Expose: &st.Exposure{}})
	st.Register(t, p.Tools, builtin.NewWriteFile())
	labels := make(chan string, 2)
	// The child starts a grandchild directly from a tool, as the subagent
	// tool would.
	st.Register(t, p.Tools, &st.Delegating{ToolName: "nest", Fn: func(ctx context.Context, call *tools.Call, sc *subagents.Scope) (*tools.Result, error) {
		run, err := sc.Service.Start(ctx, "spawn", subagents.StartRequest{Prompt: "write", Parent: sc})
		if err != nil {
			return nil, err
		}
		defer run.Dispose()
		res, err := run.Wait(ctx)
		labels <- sc.SessionID
		labels <- res.ChildSessionID
		return &tools.Result{Output: res.Output}, err
	}})
	wait(t, start(t, p, subagents.StartRequest{Prompt: "nest"}))
	child, grandchild := st.Recv(t, labels), st.Recv(t, labels)
	asked := log.all()
	if len(asked) != 1 || asked[0].Requester != grandchild || grandchild == child || !strings.HasPrefix(grandchild, child+"/") {
		t.Fatalf("requests %+v; child %q grandchild %q", asked, child, grandchild)
	}
}
